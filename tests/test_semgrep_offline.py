"""Every Semgrep that the build files start runs offline: `--disable-version-check` (without it
even `semgrep --version` asks semgrep.dev for the latest release, and with no route there it
waits 96 s: `make setup-dev` spent that on every run), and a scan `--metrics=off` too. The
product's own command line is tested in tests/analyzers/semgrep/test_scan.py."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import ROOT

BUILD_FILES = ("Makefile", "Dockerfile", "action.yml", ".ci/run", "scripts/*.sh", ".github/workflows/*.yml",
               "docs/workflows/*.yml")
# `semgrep` as a command (a path ending in it, quoted or not) followed by an option or a subcommand
CALL = re.compile(r"""(?:^|[\s/"'&|;(])semgrep["']?\s+(?P<args>(?:-|(?:scan|ci|test|show|lsp)\b).*)$""")


def semgrep_calls(text: str) -> list[str]:
    return [m.group("args") for line in text.splitlines() if not line.lstrip().startswith("#")
            if (m := CALL.search(line))]


def test_the_pattern_finds_a_call_and_ignores_words() -> None:
    line = 'if ! "$VENV/opt/semgrep/bin/semgrep" --version >/dev/null; then'
    assert semgrep_calls(line) == ["--version >/dev/null; then"]
    assert semgrep_calls("  && semgrep scan --config r.yml .") == ["scan --config r.yml ."]
    assert semgrep_calls("# semgrep --version in a comment") == []
    assert semgrep_calls("step \"semgrep $SEMGREP_VERSION (own virtualenv)\"") == []


def test_every_semgrep_in_the_build_files_runs_offline() -> None:
    found: list[tuple[Path, str]] = []
    for pattern in BUILD_FILES:
        for path in sorted(ROOT.glob(pattern)):
            found += [(path, args) for args in semgrep_calls(path.read_text(encoding="utf-8"))]
    assert {p.name for p, _ in found} >= {"install.sh", "Dockerfile"}  # what is there today is seen
    for path, args in found:
        where = f"{path.relative_to(ROOT)}: semgrep {args}"
        assert "--disable-version-check" in args, where
        if re.match(r"(scan|ci)\b", args):
            assert "--metrics=off" in args, where
