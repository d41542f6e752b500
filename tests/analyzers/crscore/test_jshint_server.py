"""JSHint in a Node process kept running (analyzers/crscore/smells/jshint.py, line_server.py):
the same smells as JSHint's command line, one start per process, a bounded request, a clean
environment, and a server that dies or cannot start costs one detection the command line."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from analyzers.crscore.smells import jshint as js
from analyzers.crscore.smells import which
from tests.analyzers.crscore.test_smells import hunks_of
from tests.support import require

CODES = {
    "old.js": "var a = 1\nvar b = a == null\n",
    "module.js": "import x from 'y';\nexport const f = (v) => v + x\n",
    "broken.js": "function (\n",
    "bom.js": "\ufeffvar s = 'é€'\n",
    "tabs.js": "var t = {a: 1, a: 2}\n\tif (t) t.a++\n",
}


def needs_jshint() -> None:
    require(js.unavailable_reason() is None, str(js.unavailable_reason()))


def children_of(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.slow
def test_the_server_reports_what_the_command_line_reports() -> None:
    needs_jshint()
    codes = dict(CODES)
    codes.update({f"hunk{i}.js": h.new_code for i, (_, _, h) in enumerate(hunks_of("javascript"))})
    cli = js.detect_with_cli(codes)
    server = js.JshintServer()
    try:
        for _ in range(2):  # the second request reuses the running Node
            found = server.lint(list(codes.values()))
            assert found == [cli[name].smells for name in codes]
    finally:
        server.stop()
    assert sum(map(len, found)) >= 8 and not any(rep.skipped for rep in cli.values())


@pytest.mark.slow
def test_one_node_serves_every_detection_and_a_dead_one_is_started_again() -> None:
    needs_jshint()
    server = js.JshintServer()
    try:
        first = server.lint(["var a = 1\n"])
        proc = server._proc  # noqa: SLF001 - the process itself, to see it kept and to kill it
        assert proc is not None and server.lint(["var a = 1\n"]) == first and server._proc is proc  # noqa: SLF001
        proc.kill()
        proc.wait(10)
        assert not server.running
        assert server.lint(["var a = 1\n"]) == first and server.running
        assert first[0][0].rule == "W033"
    finally:
        server.stop()


@pytest.mark.slow
def test_a_request_over_the_bound_is_refused_and_the_server_goes_on() -> None:
    needs_jshint()
    node = which("node")
    assert node is not None
    server = js.JshintServer(command=[node, str(js.SERVER_SOURCE), str(js.JSHINT_LIB), "300"])
    try:
        with pytest.raises(RuntimeError, match="over 300 bytes"):
            server.lint(["var a = 1;\n" * 100])
        proc = server._proc  # noqa: SLF001
        (smells,) = server.lint(["var a = 1\n"])  # the same process answers the next request
        assert [s.rule for s in smells] == ["W033"] and server._proc is proc  # noqa: SLF001
    finally:
        server.stop()


def test_a_file_over_the_size_bound_is_skipped_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_jshint()
    monkeypatch.setattr(js, "MAX_FILE_BYTES", 100)
    found = js.detect_javascript({"big.js": "var a = 1;\n" * 20, "small.js": "var a = 1\n"})
    assert found["big.js"].smells == [] and "too large for JSHint (220 bytes; at most 100)" == found["big.js"].skipped
    assert [s.rule for s in found["small.js"].smells] == ["W033"]


def test_requests_are_cut_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(js, "MAX_REQUEST_BYTES", 400)
    codes = {f"f{i}.js": "x" * 100 for i in range(6)}
    batches = js.requests(codes)
    assert [n for b in batches for n in b] == list(codes) and len(batches) == 3


@pytest.mark.slow
def test_a_server_that_cannot_start_or_stops_leaves_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_jshint()
    expected = js.detect_with_cli(CODES)
    for command in ([sys.executable, "-c", "print('no jshint here')"],  # cannot start
                    [sys.executable, "-c", "import sys; print('ready', flush=True); sys.stdin.readline()"]):
        monkeypatch.setattr(js, "_server", js.JshintServer(command=command))
        assert js.detect_javascript(CODES) == expected
    monkeypatch.setattr(js, "_server", js.JshintServer(command=[sys.executable, "-c", "print('nope')"]))
    js.detect_javascript(CODES)
    assert js._server.unavailable and "did not start (nope)" in js._server.unavailable  # noqa: SLF001


def test_the_server_sees_a_clean_environment_and_a_private_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_jshint()
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_planted_github_token")
    monkeypatch.setenv("RTCBOT_LLM_API_KEY", "sk-planted")
    server = js.JshintServer()
    try:
        server.start()
        assert server._proc is not None  # noqa: SLF001
        deadline = time.monotonic() + 10
        while not (nodes := children_of(server._proc.pid)) and time.monotonic() < deadline:  # noqa: SLF001
            time.sleep(0.05)
        (node,) = nodes
        raw = Path(f"/proc/{node}/environ").read_bytes().decode(errors="replace")
        env = dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
        assert "GITHUB_TOKEN" not in env and "RTCBOT_LLM_API_KEY" not in env and "ghs_planted" not in raw
        cwd = Path(os.readlink(f"/proc/{node}/cwd"))
        assert cwd.name.startswith("rtcbot-jshint-server-") and env["HOME"] == str(cwd)
        assert oct(cwd.stat().st_mode & 0o777) == "0o700"
    finally:
        server.stop()

    def gone() -> bool:
        try:
            return "zombie" in Path(f"/proc/{node}/status").read_text().lower()
        except FileNotFoundError:
            return True

    deadline = time.monotonic() + 10  # the kill is sent; the kernel may take a moment on a busy machine
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(), f"node {node} outlived the server"
