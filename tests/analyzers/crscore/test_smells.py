"""Smell detectors against the tools' own output on the real diffs in tests/fixtures/prs."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzers.code.diff import FileChange, Hunk, parse_diff
from analyzers.crscore.smells import (
    SmellReport,
    Source,
    detect_files,
    detect_in_file,
    detect_in_hunk,
    detect_many,
    file_source,
    hunk_source,
    node_bin,
    on_hunk,
    pmd,
)
from analyzers.crscore.smells import jshint as js
from analyzers.crscore.smells import python as py
from tests.analyzers.crscore.test_design import pylint_command
from tests.support import FIXTURES, require

PRS = FIXTURES / "prs"


def hunks_of(language: str) -> list[tuple[str, FileChange, Hunk]]:
    require(PRS.is_dir(), f"{PRS} is missing")
    out = []
    for d in sorted(PRS.glob("*.diff")):
        for f, h in parse_diff(d.read_text(encoding="utf-8")).hunks():
            if f.language == language and h.added_lines:
                out.append((d.name, f, h))
    assert out, f"no {language} hunks in the fixtures"
    return out


def snippet_lines(h: Hunk) -> set[int]:
    """The hunk's added lines, numbered within its new code."""
    return {n - h.new_start + 1 for n in h.added_lines}


@pytest.mark.slow
def test_pmd_finds_what_pmd_reports_on_changed_lines(tmp_path: Path) -> None:
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    items = hunks_of("java")
    for i, (_, _, h) in enumerate(items):
        (tmp_path / f"H{i}.java").write_text(h.new_code, encoding="utf-8")
    raw = json.loads(subprocess.run(pmd.pmd_command(tmp_path), capture_output=True, text=True,
                                    timeout=300, check=False).stdout)
    expected: dict[int, set[tuple[int, str]]] = {i: set() for i in range(len(items))}
    for f in raw["files"]:
        i = int(Path(f["filename"]).stem[1:])
        for v in f["violations"]:
            if v["beginline"] in snippet_lines(items[i][2]):
                expected[i].add((items[i][2].new_start - 1 + v["beginline"], v["rule"]))
    ours = detect_files("java", {f"H{i}.java": h.new_code for i, (_, _, h) in enumerate(items)})
    total = 0
    for i, (_, _, h) in enumerate(items):
        found = SmellReport([s.moved(h.new_start - 1) for s in ours[f"H{i}.java"].smells],
                            ours[f"H{i}.java"].skipped).on_lines(h.added_lines)
        assert {(s.line, s.rule) for s in found.smells} == expected[i]
        total += len(expected[i])
    assert total >= 3  # the fixtures add unused imports, which PMD reports
    one = detect_in_hunk("java", items[0][2])  # the per-hunk entry point agrees with the batch
    assert {(s.line, s.rule) for s in one.smells} == expected[0]


@pytest.mark.slow
def test_pmd_sentence_and_parse_errors() -> None:
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    code = "import java.util.List;\npublic class A {\n  private int unused;\n}\n"
    rep = detect_in_file("java", "A.java", code, [1, 3])
    rules = {s.rule for s in rep.smells}
    assert {"UnnecessaryImport", "UnusedPrivateField"} <= rules
    assert any(s.sentence().startswith("line 3, UnusedPrivateField: ") for s in rep.smells)
    broken = detect_in_file("java", "B.java", "int x = ;", [1])
    assert broken.smells == [] and broken.skipped and "parse" in broken.skipped


@pytest.mark.slow
def test_jshint_finds_what_jshint_reports_on_changed_lines(tmp_path: Path) -> None:
    require(js.unavailable_reason() is None, str(js.unavailable_reason()))
    items = hunks_of("javascript")
    total = 0
    for i, (_, _, h) in enumerate(items):
        src = tmp_path / f"h{i}.js"
        src.write_text(h.new_code, encoding="utf-8")
        cfg = tmp_path / f"h{i}.json"
        cfg.write_text(json.dumps(js.config_for(h.new_code)), encoding="utf-8")
        # the tool's own default reporter: "file: line L, col C, message"
        proc = subprocess.run([str(node_bin("jshint")), "--config", str(cfg), str(src)],
                              capture_output=True, text=True, timeout=120, check=False)
        expected = {(h.new_start - 1 + int(m[0]), int(m[1]), m[2].strip())
                    for m in re.findall(r"line (\d+), col (\d+), (.*)", proc.stdout)
                    if int(m[0]) in snippet_lines(h)}
        found = detect_in_hunk("javascript", h)
        assert found.skipped is None
        assert {(s.line, s.col, s.message) for s in found.smells} == expected
        total += len(expected)
    assert total >= 1


def test_jshint_knows_modern_syntax() -> None:
    require(js.unavailable_reason() is None, str(js.unavailable_reason()))
    modern = "const f = async (x) => { const { a, ...rest } = x; return [a, rest]; };\nexport default f;\n"
    assert detect_in_file("javascript", "m.js", modern, [1, 2]).smells == []
    old = "var a = 1\nvar b = a == null\n"
    rep = detect_in_file("javascript", "o.js", old, [1, 2])
    assert any(s.sentence().startswith("line 1, col ") and "semicolon" in s.message for s in rep.smells)


SMELLY = '''\
import os


def long_params(a, b, c, d, e, f, g):
    try:
        return os.path.join(a, b)
    except:
        pass


def branchy(x):
    y = 0
''' + "".join(f"    if x == {i}:\n        y += {i}\n" for i in range(14)) + '''\
    return y


class Holder:
    def __init__(self):
''' + "".join(f"        self.a{i} = {i}\n" for i in range(9)) + '''
    def total(self):
        return self.a0


def lam():
    return sorted([1, 2], key=lambda value: (value * 1000 + 12345678) % 97 + len(str(value)) + 11)
'''


@pytest.mark.slow
def test_python_smells_match_pylint_and_radon(tmp_path: Path) -> None:
    src = tmp_path / "smelly.py"
    src.write_text(SMELLY, encoding="utf-8")
    proc = subprocess.run(pylint_command([src]), capture_output=True, text=True, timeout=300, check=False)
    tool = {(m["line"], m["symbol"]) for m in json.loads(proc.stdout)}
    from radon.complexity import cc_rank, cc_visit

    radon = {(b.lineno, "complex-function") for b in cc_visit(SMELLY) if cc_rank(b.complexity) >= "C"}
    rep = detect_in_file("python", "smelly.py", SMELLY, range(1, 200))
    got = {(s.line, s.rule) for s in rep.smells}
    assert tool and tool <= got
    assert radon and radon <= got
    assert {"too-many-arguments", "too-many-branches", "too-many-instance-attributes"} <= {r for _, r in tool}
    assert {"useless-try-except", "long-lambda"} <= {r for _, r in got}
    assert all(re.match(r"line \d+, ", s.sentence()) for s in rep.smells)
    only_changed = detect_in_file("python", "smelly.py", SMELLY, [4])
    assert {s.rule for s in only_changed.smells} == {"too-many-arguments"}


@pytest.mark.slow
def test_python_fixture_hunks_agree_with_the_tools() -> None:
    for _, _, h in hunks_of("python"):
        rep = detect_in_hunk("python", h)
        if py.parseable(h.new_code) is None:
            # the tools cannot read a fragment either: pylint says syntax-error
            proc = subprocess.run([sys.executable, "-m", "pylint", "--disable=all", "--enable=syntax-error",
                                   "--output-format=json", "--from-stdin", "frag.py"],
                                  input=h.new_code, capture_output=True, text=True, timeout=120, check=False)
            assert any(m["symbol"] == "syntax-error" for m in json.loads(proc.stdout))
            assert rep.skipped and rep.smells == []
        else:
            assert rep.skipped is None
            assert all(s.line in h.added_lines for s in rep.smells)


def test_unknown_language_is_skipped_with_a_reason() -> None:
    rep = detect_in_file("go", "x.go", "package main\n", [1])
    assert rep.smells == [] and rep.skipped and "no smell detector" in rep.skipped


def test_missing_tools_are_skipped_not_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(Path("/nonexistent-bin")))  # no java, no node
    assert "Java is not installed" in str(detect_in_file("java", "A.java", "class A {}", [1]).skipped)
    assert "Node.js is not installed" in str(detect_in_file("javascript", "a.js", "var a;", [1]).skipped)


@pytest.mark.slow
def test_one_tool_run_per_language_finds_what_a_run_per_hunk_finds() -> None:
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    require(js.unavailable_reason() is None, str(js.unavailable_reason()))
    items = [h for lang in ("python", "java", "javascript") for _, _, h in hunks_of(lang)]
    items += [h for _, _, h in hunks_of("python")[:1]]  # the same piece twice is looked at twice
    langs = [{".py": "python", ".java": "java", ".js": "javascript"}[Path(h.path).suffix] for h in items]
    batch = detect_many([hunk_source(lang, h) for lang, h in zip(langs, items, strict=True)])
    for lang, h, rep in zip(langs, items, batch, strict=True):
        one = detect_in_hunk(lang, h)
        assert (on_hunk(rep, h).smells, on_hunk(rep, h).skipped) == (one.smells, one.skipped)
    assert sum(len(on_hunk(rep, h).smells) for h, rep in zip(items, batch, strict=True)) >= 3
    unknown = detect_many([Source("go", "x.go", "package main\n"), Source("python", "a.py", "x = 1\n")])
    assert "no smell detector for go" in str(unknown[0].skipped) and unknown[1].skipped is None


@pytest.mark.slow
def test_the_pmd_server_reports_what_the_pmd_cli_reports(tmp_path: Path) -> None:
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    for i, (_, _, h) in enumerate(hunks_of("java")):
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "Hunk.java").write_text(h.new_code, encoding="utf-8")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "B.java").write_text("int x = ;", encoding="utf-8")
    cli = pmd.run_pmd_cli(tmp_path)  # the same files each round: one CLI run (a JVM start) is the reference
    server = pmd.PmdServer()
    try:
        for _ in range(2):  # the second request reuses the running JVM
            server.analyse(tmp_path, tmp_path.parent / "report.json")
            ours = json.loads((tmp_path.parent / "report.json").read_text())
            for key in ("files", "processingErrors", "configurationErrors"):
                assert sorted(map(json.dumps, ours[key])) == sorted(map(json.dumps, cli[key])), key
        assert ours["files"] and ours["processingErrors"]
    finally:
        server.stop()


@pytest.mark.slow
def test_a_pmd_server_that_cannot_start_leaves_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    broken = pmd.PmdServer(command=[sys.executable, "-c", "print('no jdk.compiler here')"])
    with pytest.raises(pmd.ServerUnavailable, match="did not start"):
        broken.analyse(tmp_path, tmp_path / "r.json")
    assert broken.unavailable  # not tried again in this process
    with pytest.raises(pmd.ServerUnavailable):
        broken.analyse(tmp_path, tmp_path / "r.json")
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    code = "import java.util.List;\npublic class A {}\n"
    monkeypatch.setattr(pmd, "_server", broken)

    def on_server() -> SmellReport:  # the operator's RTCBOT_PMD_SERVER=on
        return detect_many([file_source("java", "A.java", code)], pmd_server="on")[0].on_lines([1])

    rep = on_server()
    assert {s.rule for s in rep.smells} == {"UnnecessaryImport"} and rep.skipped is None
    # a server that stops during a request: that request goes to the CLI, the next starts it again
    dies = pmd.PmdServer(command=[sys.executable, "-c", "import sys; print('ready', flush=True); sys.stdin.readline()"])
    with pytest.raises(pmd.ServerStopped):
        dies.analyse(tmp_path, tmp_path / "r.json")
    assert dies.unavailable is None
    monkeypatch.setattr(pmd, "_server", dies)
    assert on_server().smells == rep.smells


def test_a_process_uses_the_pmd_server_from_its_second_run_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pmd, "_server", pmd.PmdServer())  # not running
    monkeypatch.setattr(pmd, "_runs", itertools.count())
    assert [pmd.use_server() for _ in range(3)] == [False, True, True]  # a one-shot command: the CLI
    assert pmd.use_server("off") is False
    monkeypatch.setattr(pmd, "_runs", itertools.count())
    assert pmd.use_server("on") is True


@pytest.mark.slow
def test_warm_up_runs_pmd_on_its_own_source_in_the_server() -> None:
    require(pmd.unavailable_reason() is None, str(pmd.unavailable_reason()))
    pmd._server.stop()
    pmd.warm_up("off")
    assert not pmd._server.running  # the operator's "off": no JVM kept
    before = next(pmd._runs)
    pmd.warm_up("on", rounds=2)
    try:
        assert pmd._server.running and next(pmd._runs) == before + 3  # two analyses, then this count
        own = pmd.SERVER_SOURCE.read_text(encoding="utf-8")
        [report] = pmd.detect_java({pmd.SERVER_SOURCE.name: own}, "on").values()
        assert report.skipped is None  # real Java, which PMD parsed: the JIT warmed on real paths
    finally:
        pmd._server.stop()
