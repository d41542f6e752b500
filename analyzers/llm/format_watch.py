"""A model that keeps missing the expected format is stopped, not paid for hunk after hunk.

Each analyzer that asks a model for a shaped answer ("Line <n>: <comment>", a description
without code, a code block) counts, during one run, the answers in that shape and those not.
Once it has seen `after` answers, a share in shape below `min_share` stops it: the hunks not
asked yet are skipped with the reason, and the report says the share and where it stopped.
It is the figure `rtcbot qualify` measures of a model (its `format` column, the same
threshold there: bot/cli/commands/qualify.py), applied while the work runs.

Requests already in flight when the watch stops finish (their answers still count); nothing
new is asked. Answers are counted as they arrive, while their request still holds its slot
(`counting`, LLMClient.sample's `heard`), so no request waiting for a slot is sent once the
answers counted have stopped the run, however slow the machine: with k slots, only the k - 1
others in flight then finish. The counts are shared by the analyzer's worker threads, under a
lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

AFTER = 8  # answers seen before the watch may stop a run ("a handful")
MIN_SHARE = 0.25  # answers in the expected format, at least this share of those seen


def counting(answered: Callable[[bool], object] | None,
             check: Callable[[str], bool]) -> Callable[[list[str]], None] | None:
    """LLMClient.sample's `heard`: each answer judged by `check` (in the expected format or
    not) and told to `answered` (a FormatWatch's `saw`, `rtcbot qualify`'s count); None for none."""
    if answered is None:
        return None

    def heard(texts: list[str]) -> None:
        for text in texts:
            answered(check(text))

    return heard


@dataclass
class FormatWatch:
    """The answers of one run in and out of the expected format (`shape`, in words); `stopped`
    once too few were. `why` is the halt condition of an LLM client view (LLMClient.halting)."""

    shape: str
    after: int = AFTER
    min_share: float = MIN_SHARE
    good: int = 0
    bad: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def saw(self, well_formed: bool) -> None:
        """Count one answer."""
        with self._lock:
            if well_formed:
                self.good += 1
            else:
                self.bad += 1

    @property
    def seen(self) -> int:
        return self.good + self.bad

    @property
    def share(self) -> float | None:
        """The share of answers in the expected format (None: none seen)."""
        total = self.seen
        return self.good / total if total else None

    @property
    def stopped(self) -> bool:
        share = self.share
        return self.seen >= self.after and share is not None and share < self.min_share

    def why(self) -> str | None:
        """Why nothing more is asked (None: go on)."""
        if not self.stopped:
            return None
        return (f"the model's answers keep missing the expected format {self.shape} ({self.good} of "
                f"{self.seen} in it, under {self.min_share:.0%})")

    def note(self, not_asked: int) -> str | None:
        """The report's line on the format: the share, and the stop when there was one."""
        share = self.share
        if share is None:
            return None
        line = f"{self.bad} of {self.seen} answers were not in the expected format {self.shape} ({share:.0%} in it)"
        if self.stopped:
            line += (f"; stopped after {self.seen} answers (under {self.min_share:.0%} in format): "
                     f"{not_asked} hunk(s) not asked")
        return line
