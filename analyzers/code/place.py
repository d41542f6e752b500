"""Where each finding sits in the code's structure (`Finding.place`, which its fingerprint names
besides its content: analyzers/report.py). Pure.

A place is the innermost definition around the finding's first line (analyzers/code/enclosing.py:
Python with `ast`, Java, JavaScript and TypeScript with a scan of braces; "" at module level,
in another language or in a file that does not parse) and the finding's occurrence there: how
many runs of lines with the same normalised text as the finding's lines start between that
definition's first line (the file's first, at module level) and the finding's. So
`subprocess.call(cmd, shell=True)` in `cleanup()` and in `run_user()` have two places, a copy
added below one of them a third, and moving the whole definition keeps its place. (A copy added
*above* a finding in the same definition takes its occurrence: the finding then shows again, as
a new one, rather than the copy passing unseen.)

The pipeline (analyzers/pipeline.py) gives every finding with a path and a line its place from
the file at the head of the change (where it cannot be read, as AutoFix scans it: its hunks at
their lines, `pseudo_file`), one read and one parse per file, after its analyzer ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from analyzers.autofix.text import pseudo_file
from analyzers.code.diff import ChangeSet, language_of
from analyzers.code.enclosing import innermost
from analyzers.report import Finding, Place

Span = tuple[int, int]  # a finding's first and last line, 1-based, inclusive


def _normalised(line: str) -> str:
    return " ".join(line.split())


def places(text: str, language: str | None, spans: Sequence[Span]) -> list[Place | None]:
    """The place of each span of `text` (None for one outside the file)."""
    lines = [_normalised(ln) for ln in text.splitlines()]
    inside = [(s, max(s, e)) for s, e in spans if 1 <= s <= len(lines)]
    found = innermost(text, language, [s for s, _ in inside]) if inside else None
    defs = dict(zip((s for s, _ in inside), found or [None] * len(inside), strict=True))
    out: list[Place | None] = []
    for start, end in spans:
        if not 1 <= start <= len(lines):
            out.append(None)
            continue
        d = defs[start]
        want = lines[start - 1:min(max(start, end), len(lines))]
        first = max(1, d.start) if d is not None else 1
        seen = sum(1 for i in range(first - 1, start - 1) if lines[i] == want[0] and lines[i:i + len(want)] == want)
        out.append(Place(str(d) if d is not None else "", seen))
    return out


def place_findings(findings: Sequence[Finding], text_of: Callable[[str], str | None]) -> list[Finding]:
    """`findings`, each with a path and a line given its place in the file at the head
    (`text_of(path)`; a file that is not there leaves its findings as they are); one already
    placed keeps its place."""
    todo: dict[str, list[int]] = {}
    for i, f in enumerate(findings):
        if f.place is None and f.path and f.start_line is not None and f.start_line >= 1:
            todo.setdefault(f.path, []).append(i)
    out = list(findings)
    for path, indexes in todo.items():
        text = text_of(path)
        if text is None:
            continue
        spans = [(out[i].start_line or 1, out[i].end_line or out[i].start_line or 1) for i in indexes]
        for i, place in zip(indexes, places(text, language_of(path), spans), strict=True):
            if place is not None:
                out[i] = dataclasses.replace(out[i], place=place)
    return out


def head_text(file_at_head: Callable[[str], str | None], changes: ChangeSet) -> Callable[[str], str | None]:
    """A path's text at the head (`file_at_head`), else its hunks at their lines."""

    def text_of(path: str) -> str | None:
        text = file_at_head(path)
        fc = changes.file(path) if text is None else None
        return pseudo_file(fc) if fc is not None and fc.hunks else text

    return text_of
