"""Analyzers never read the environment: their settings come in as arguments (`Tools`,
`LLMSettings`), read from RTCBOT_* variables by bot/core/settings.py alone."""

from __future__ import annotations

import re

from tests.support import ROOT

# The only places in analyzers/ that may name the environment, and why:
ALLOWED = {
    # builds a tool's clean environment: PATH, locale, HOME, and PASSABLE names the caller asks for
    "analyzers/tools/programs.py",
    # sets the embedding library's offline switches before importing it (a write; it reads nothing)
    "analyzers/crscore/encoders.py",
    # names os.environ.get and os.getenv as data: the calls a fix of a hard-coded secret may add
    "analyzers/autofix/allowlist.py",
}
READS = re.compile(r"\bos\.environ\b|\bos\.getenv\b|\benviron\.get\b|\bgetenv\(")


def test_no_analyzer_reads_the_environment() -> None:
    found = []
    for path in sorted((ROOT / "analyzers").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED or rel.startswith("analyzers/semgrep/rules/"):  # rules' test inputs, not our code
            continue
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if READS.search(line):
                found.append(f"{rel}:{no}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_the_allowed_places_only_build_or_set_an_environment() -> None:
    """The clean-environment builder reads only the PASSABLE names it is asked for; encoders.py
    only sets defaults."""
    tooling = (ROOT / "analyzers/tools/programs.py").read_text(encoding="utf-8")
    assert [ln.strip() for ln in tooling.splitlines() if READS.search(ln)] == [
        "if name in os.environ:", "env[name] = os.environ[name]"]
    sts = (ROOT / "analyzers/crscore/encoders.py").read_text(encoding="utf-8")
    assert all("os.environ.setdefault(" in ln for ln in sts.splitlines() if READS.search(ln))
    allowlist = (ROOT / "analyzers/autofix/allowlist.py").read_text(encoding="utf-8")
    named = [ln.strip() for ln in allowlist.splitlines() if READS.search(ln)]
    assert named and all(re.fullmatch(r'"[\w-]+": \("os\.environ\.get", "os\.getenv"\),', ln) for ln in named), named
