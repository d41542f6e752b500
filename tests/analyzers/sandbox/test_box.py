"""analyzers/sandbox/launcher.py, the sandbox's launcher, apart from isolation (tests/security/test_sandbox.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from analyzers.sandbox.run import find_python, launcher_config
from tests.support import ROOT

HEAVY = {"json", "signal", "enum", "re", "ast", "subprocess", "typing"}
LAUNCHER = ROOT / "analyzers" / "sandbox" / "launcher.py"


def test_the_launcher_starts_on_built_in_modules_and_reports_the_run(tmp_path: Path) -> None:
    """The launcher runs before every sandboxed test case: what it imports is paid per case.
    Its settings go in as marshal and its status comes out as JSON the parent reads."""
    status_r, status_w = os.pipe()
    cfg: dict[str, object] = {"status_fd": status_w, "info_fd": -1, "rlimits": [("RLIMIT_NOFILE", 64, 64)],
                              "env": {"GREETING": "hé"}, "cwd": str(tmp_path), "userns": False, "net": False}
    python = find_python(as_other=False)
    try:
        proc = subprocess.run([python, "-I", "-S", "-X", "importtime", str(LAUNCHER), launcher_config(cfg),
                               "/bin/sh", "-c", 'echo "$GREETING"; exit 3'],
                              pass_fds=(status_w,), capture_output=True, timeout=60, env={})
    finally:
        os.close(status_w)
    with os.fdopen(status_r, "rb") as f:
        status = json.loads(f.read())
    assert proc.stdout.decode() == "hé\n"
    assert os.waitstatus_to_exitcode(status["wstatus"]) == 3 and status["maxrss"] > 0 and status["cpu"] >= 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines()
                if line.startswith("import time:")}
    assert imported and not HEAVY & imported, sorted(HEAVY & imported)
    assert not any(name.startswith(("analyzers", "bot", "reporters")) for name in imported), imported
