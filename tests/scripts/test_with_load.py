"""scripts/with_load.sh (`make test-loaded`): a command runs beside N busy processes, which are
gone when it ends; its exit status is the command's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT

WITH_LOAD = ROOT / "scripts" / "with_load.sh"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_command_runs_beside_busy_processes_that_stop_after_it(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    # the command records which of the burners it saw running, then fails with its own status
    command = f'for p in $LOAD_PIDS; do kill -0 $p && echo $p; done > {seen}; exit 7'
    r = subprocess.run([str(WITH_LOAD), "2", "--", "sh", "-c", command], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "PYTHON": sys.executable})
    assert r.returncode == 7
    m = re.fullmatch(r"load: 2 busy processes \(pids (\d+) (\d+)\) beside: sh -c .*\n", r.stderr, re.DOTALL)
    assert m, r.stderr
    burners = {int(m[1]), int(m[2])}
    assert burners <= {int(p) for p in seen.read_text().split()}  # running while the command ran
    assert not any(alive(p) for p in burners)  # and stopped with it


def test_a_wrong_call_says_how_to_call_it() -> None:
    r = subprocess.run([str(WITH_LOAD), "two", "--", "true"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stderr.startswith("usage: ") and r.stderr.count("\n") == 1


def test_make_test_loaded_runs_the_suite_through_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "scripts/with_load.sh $(LOAD) -- $(MAKE) --no-print-directory unit" in makefile
    assert "test-loaded" in (ROOT / "README.md").read_text(encoding="utf-8")
