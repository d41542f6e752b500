"""Which base line a head line was, and the statement a line belongs to: what a base suppression
covers (analyzers/code/suppressions.py). Pure.

A suppression from the base branch covers the statement it was written above (or on), by
content: every line of that statement must be the base's, unchanged, and still the one under
the marker. `BaseLines` maps a line of the file at the head to its line at the base through the
change's hunks (None for a line the pull request added); `statement_span` is the smallest Python
statement around a line (`ast`), else the finding's own lines.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from analyzers.code.diff import Hunk
from analyzers.code.pyparse import parse


class BaseLines:
    """Head line → base line, through a file's hunks (sorted by their place at the head)."""

    def __init__(self, hunks: Sequence[Hunk]) -> None:
        self._hunks = sorted(hunks, key=lambda h: h.new_start)

    def of(self, n: int) -> int | None:
        """The base line that head line `n` was (None: the pull request added it)."""
        shift = 0
        for h in self._hunks:
            for ln in h.lines:
                if ln.new_no == n:
                    return ln.old_no if ln.kind == " " else None
            last_new = h.new_start + h.new_count - 1 if h.new_count else h.new_start
            if n <= last_new:
                break
            last_old = h.old_start + h.old_count - 1 if h.old_count else h.old_start
            shift = last_old - last_new
        return n + shift


def statement_span(text: str, language: str | None, start: int, end: int) -> tuple[int, int]:
    """The first and last line of the smallest statement around line `start` of `text` (Python),
    widened to the finding's `start`..`end`; the finding's lines elsewhere."""
    end = max(start, end)
    if language != "python":
        return start, end
    try:
        tree = parse(text)
    except SyntaxError:
        return start, end
    best: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= start <= (node.end_lineno or node.lineno):
            span = (node.lineno, node.end_lineno or node.lineno)
            if best is None or span[1] - span[0] < best[1] - best[0]:
                best = span
    return (start, end) if best is None else (min(best[0], start), max(best[1], end))
