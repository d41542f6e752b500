"""analyzers.tools.programs: tools get a clean environment and a private folder, and long-lived ones
die with the process that started them, whatever signal ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from analyzers.tools import programs as tooling


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_run_gives_a_clean_environment_and_a_private_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("RTCBOT_LLM_API_KEY", "sk-secret")
    out = tooling.run([sys.executable, "-c", "import os, json; print(json.dumps([dict(os.environ), os.getcwd()]))"],
                      timeout=30)
    import json
    env, cwd = json.loads(out.stdout)
    assert "GITHUB_TOKEN" not in env and "RTCBOT_LLM_API_KEY" not in env
    assert env["HOME"] == cwd and Path(cwd).name.startswith("rtcbot-tool-")
    assert not Path(cwd).exists()  # removed afterwards


def test_run_refuses_to_pass_a_variable_that_is_not_passable() -> None:
    with pytest.raises(ValueError, match="GITHUB_TOKEN"):
        tooling.tool_env(pass_through=["GITHUB_TOKEN"])


def test_run_kills_the_whole_session_on_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    with pytest.raises(subprocess.TimeoutExpired):
        tooling.run(["sh", "-c", script], timeout=1.0)
    assert _wait_gone(int(pidfile.read_text()))


def test_workdir_is_private(tmp_path: Path) -> None:
    with tooling.workdir() as d:
        assert (d.stat().st_mode & 0o777) == 0o700
    assert not d.exists()


DRIVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from analyzers.tools import programs as tooling
    with tooling.workdir() as d:
        a = tooling.popen_bound(["sleep", "300"], cwd=d, env=tooling.tool_env())
        b = tooling.popen_bound(["-m", "http.server", "--bind", "127.0.0.1", "0"], cwd=d, env=tooling.tool_env(),
                                stdout=open("/dev/null", "wb"), stderr=open("/dev/null", "wb"))
        print(a.pid, b.pid, flush=True)
        time.sleep(300)
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_bound_processes_die_with_their_parent(sig: int) -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert driver.stdout is not None
        pids = [int(p) for p in driver.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        # the sleep runs as the launcher's child: find it too
        children = [int(c) for c in Path(f"/proc/{pids[0]}/task/{pids[0]}/children").read_text().split()]
        os.kill(driver.pid, sig)
        driver.wait(timeout=10)
        for pid in pids + children:
            assert _wait_gone(pid), f"process {pid} outlived its parent (signal {sig})"
    finally:
        if driver.poll() is None:
            driver.kill()


def test_release_ends_a_bound_process() -> None:
    with tooling.workdir() as d:
        proc = tooling.popen_bound(["sleep", "300"], cwd=d, env=tooling.tool_env())
        proc.release()
        assert proc.wait(timeout=10) is not None
