"""Scan every target whatever its name: each is handed to Semgrep under a neutral name that ends
in its language's extension, and the results come back under the target's own name.

Semgrep takes a file's language from its extension and leaves some names out on its own
(`*.min.js`, even when named on the command line, without saying so); it scans neither an
extension-less script with a shebang nor `auth.mts`. The pull request's author picks the names,
so names must not decide what is scanned: the language comes from `detect_language` (the
name's allowlist, else the content), and the file is linked as `<folder>/<n><suffix>` inside the
scan's root. A target whose language is unknown keeps its name (Semgrep decides, and says, or
the scan reports it "not scanned"). Paths in `paths:` filters of the operator's extra rules see
the neutral names (rtcbot's own rules have none).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from analyzers.code.languages import SCAN_SUFFIX, SNIFF_CHARS, detect_language

ALIAS_PREFIX = "rtcbot-target-"


def content_start(path: Path) -> str | None:
    """The first SNIFF_CHARS characters of a file (None when it cannot be read)."""
    try:
        with path.open("rb") as fh:
            return fh.read(SNIFF_CHARS).decode("utf-8", errors="replace")
    except OSError:
        return None


def target_language(root: Path, target: str, languages: Mapping[str, str | None]) -> str | None:
    """The caller's language for `target`, else the one its name and content say."""
    if (given := languages.get(target)) is not None:
        return given
    return detect_language(target, content_start(root / target))


@contextmanager
def aliased(root: Path, targets: Sequence[str],
            languages: Mapping[str, str | None] | None = None) -> Iterator[dict[str, str]]:
    """{name Semgrep is given → target}: a neutral name in the target's language's extension
    (a hard link, else a copy, in a fresh folder inside `root`, removed afterwards), or the
    target itself where its language is unknown or the file cannot be linked."""
    folder = Path(tempfile.mkdtemp(dir=root, prefix=ALIAS_PREFIX))
    names: dict[str, str] = {}
    try:
        for i, target in enumerate(targets):
            suffix = SCAN_SUFFIX.get(target_language(root, target, languages or {}) or "")
            alias = f"{folder.name}/{i}{suffix}"
            if suffix is None or not _link(root / target, root / alias):
                alias = target
            names[alias] = target
        yield names
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _link(source: Path, alias: Path) -> bool:
    if not source.is_file():
        return False
    try:
        os.link(source, alias)
    except OSError:
        try:
            shutil.copyfile(source, alias)
        except OSError:
            return False
    return True
