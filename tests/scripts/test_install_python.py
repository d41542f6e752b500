"""scripts/install.sh's interpreter: a service's virtualenv (an absolute path, /opt/rtcbot-…)
is made with the system's /usr/bin/python3, never the first python3 on root's PATH (a pyenv in
/root gave the service's user "bad interpreter", exit 126, and a restart loop); PYTHON says
otherwise; an interpreter that is not there is one line and exit 2."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support import ROOT

INSTALL = ROOT / "scripts" / "install.sh"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    return subprocess.run(["bash", str(INSTALL), *args], env={**base, **env}, capture_output=True, text=True,
                          timeout=60, check=False)


def test_a_service_install_uses_the_system_interpreter(tmp_path: Path) -> None:
    pyenv = tmp_path / "root" / ".pyenv" / "shims"  # first on PATH, as root's pyenv is
    pyenv.mkdir(parents=True)
    (pyenv / "python3").symlink_to("/bin/false")
    path = f"{pyenv}:{os.environ['PATH']}"
    assert run("--which-python", "/opt/rtcbot-0.2.0", PATH=path).stdout == "/usr/bin/python3\n"
    assert run("--which-python", PATH=path).stdout == "python3\n"  # make setup's .venv: PATH's
    assert run("--which-python", "/opt/rtcbot-0.2.0", PYTHON="/usr/local/bin/python3.12").stdout \
        == "/usr/local/bin/python3.12\n"


def test_a_missing_interpreter_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run(str(tmp_path / "venv"), PYTHON=str(tmp_path / "no-python"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "no interpreter" in done.stderr and not (tmp_path / "venv").exists()
