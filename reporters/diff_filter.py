"""The one diff filter: which lines a pull request's diff shows, by file and side. Pure.

GitHub takes a check-run annotation or a review comment only on a line its diff shows: on the
RIGHT side (the head) an added or a context line, on the LEFT side (the base) a deleted or a
context line; a comment on several lines must keep them in one hunk. The caller computes the
filter once from the ChangeSet (`DiffFilter.of`) and hands it to every reporter in
`Target.diff`; the check runs annotate what it shows (`place`: cut to the part a hunk shows)
and list the rest, the pull request review comments only where it shows every line (`shows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from analyzers.code.diff import ChangeSet

Side = Literal["LEFT", "RIGHT"]
Span = tuple[int, int]  # first and last line of one hunk on one side, inclusive


@dataclass(frozen=True)
class DiffFilter:
    """Per side, each file's hunks as line spans (`right`: the head's line numbers, `left`: the
    base's). A file the diff shows no hunk of (ignored, binary, deleted, too large) shows no line."""

    right: Mapping[str, tuple[Span, ...]] = field(default_factory=dict, hash=False)
    left: Mapping[str, tuple[Span, ...]] = field(default_factory=dict, hash=False)

    @classmethod
    def of(cls, changes: ChangeSet) -> DiffFilter:
        right: dict[str, tuple[Span, ...]] = {}
        left: dict[str, tuple[Span, ...]] = {}
        for f in changes.files:
            new = tuple((h.new_start, h.new_start + h.new_count - 1) for h in f.hunks if h.new_count > 0)
            old = tuple((h.old_start, h.old_start + h.old_count - 1) for h in f.hunks if h.old_count > 0)
            if new:
                right[f.path] = new
            if old:
                left[f.path] = old
        return cls(right, left)

    def spans(self, path: str, side: Side = "RIGHT") -> tuple[Span, ...]:
        return (self.right if side == "RIGHT" else self.left).get(path, ())

    def place(self, path: str, start: int, end: int, side: Side = "RIGHT") -> Span | None:
        """The part of lines `start`–`end` that the diff shows: their overlap with the first
        hunk they meet; None when it shows none of them."""
        for first, last in self.spans(path, side):
            lo, hi = max(first, start), min(last, end)
            if lo <= hi:
                return lo, hi
        return None

    def shows(self, path: str, start: int, end: int, side: Side = "RIGHT") -> bool:
        """Whether the diff shows every line `start`–`end`, in one hunk (where GitHub takes a
        review comment on them)."""
        return start >= 1 and any(first <= start and end <= last for first, last in self.spans(path, side))
