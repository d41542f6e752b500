"""Where each finding sits in the code's structure (`Finding.place`, which its fingerprint names
besides its content: analyzers/report.py). Pure.

A place is the innermost definition around the finding's first line (analyzers/code/enclosing.py:
Python with `ast`, Java, JavaScript and TypeScript with a scan of braces; "" at module level,
in another language or in a file that does not parse) and the finding's occurrence there: how
many runs of lines with the same normalised text as the finding's lines start between that
definition's first line (the file's first, at module level) and the finding's; how many such
runs the definition holds in all (`count`); and the whole path of definitions and branches
around it where that says more than the definition (analyzers/code/scope_path.py). So
`subprocess.call(cmd, shell=True)` in `cleanup()` and in `run_user()` have two places, `def run`
in both arms of an `if` two, and moving the whole definition keeps its place. A copy added
anywhere in the definition changes the count, so every identical line there gets a new
fingerprint: the copy cannot take over the dismissed occurrence (bot/core/dismissals.py says
which dismissal it voided).

The pipeline (analyzers/pipeline.py) gives every finding with a path and a line its place from
the file at the head of the change (where it cannot be read, as AutoFix scans it: its hunks at
their lines, `pseudo_file`), one read and one parse per file, after its analyzer ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from analyzers.autofix.text import pseudo_file
from analyzers.code.diff import ChangeSet
from analyzers.code.enclosing import Definition, chains
from analyzers.code.languages import detect_language
from analyzers.code.scope_path import paths
from analyzers.report import Finding, Place

Span = tuple[int, int]  # a finding's first and last line, 1-based, inclusive


def _normalised(line: str) -> str:
    return " ".join(line.split())


def _runs(lines: Sequence[str], want: Sequence[str]) -> list[int]:
    """The 1-based lines where a run of lines equal to `want` starts."""
    return [i + 1 for i, ln in enumerate(lines) if ln == want[0] and list(lines[i:i + len(want)]) == list(want)]


def _within(r: int, d: Definition | None, chain: Sequence[Definition]) -> bool:
    """Whether line `r` is in definition `d` (None: the module): by its last line where the parser
    gives it (Python), else by the chain of definitions around `r`."""
    if d is None:
        return True
    if d.end:
        return d.start <= r <= d.end
    return any((c.name, c.start) == (d.name, d.start) for c in chain)


def places(text: str, language: str | None, spans: Sequence[Span]) -> list[Place | None]:
    """The place of each span of `text` (None for one outside the file)."""
    lines = [_normalised(ln) for ln in text.splitlines()]
    wants = [lines[s - 1:min(max(s, e), len(lines))] if 1 <= s <= len(lines) else [] for s, e in spans]
    runs = [_runs(lines, want) if want else [] for want in wants]
    starts = [s for s, _ in spans if 1 <= s <= len(lines)]
    found = chains(text, language, starts if language == "python" else starts + [r for rs in runs for r in rs])
    path_of = paths(text, language, starts)
    out: list[Place | None] = []
    for (start, _), want, at in zip(spans, wants, runs, strict=True):
        if not want:
            out.append(None)
            continue
        chain = found.get(start, []) if found is not None else []
        d = chain[-1] if chain else None
        first = max(1, d.start) if d is not None else 1
        seen = sum(1 for r in at if first <= r < start)
        count = sum(1 for r in at if _within(r, d, found.get(r, []) if found is not None else []))
        out.append(Place(str(d) if d is not None else "", seen, path_of.get(start, ""), max(count, seen + 1)))
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
        for i, place in zip(indexes, places(text, detect_language(path, text), spans), strict=True):
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
