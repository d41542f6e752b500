"""Where a run's time goes: spans (a stage, its start and end) recorded where the work happens.

The places that start a local tool (`analyzers.tools.programs.run`) or run a group of them (the
smell detectors of one language) open a `span`; it costs nothing when no recorder is
installed, which is always the case in the service. A benchmark installs one with
`recording()` around a run and builds the run's timeline from what it got (bench/timeline.py).

There is one recorder per process at a time (analyzers run in threads that do not inherit a
context), so a recording is meant for one run at a time; a span that starts while none is
installed is not recorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    stage: str  # what ran: "semgrep", "pylint", "smells java", …
    start: float  # time.perf_counter() seconds
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class Recorder:
    """The spans recorded since it was installed, from any thread."""

    spans: list[Span] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, stage: str, start: float, end: float) -> None:
        with self._lock:
            self.spans.append(Span(stage, start, end))

    def taken(self) -> list[Span]:
        """The spans so far, in the order they started."""
        with self._lock:
            return sorted(self.spans, key=lambda s: s.start)


_active: Recorder | None = None


@contextmanager
def span(stage: str) -> Iterator[None]:
    """Time the block as `stage` when a recorder is installed (else only run it)."""
    recorder = _active
    if recorder is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        recorder.add(stage, start, time.perf_counter())


@contextmanager
def recording() -> Iterator[Recorder]:
    """Install a fresh recorder for the block (the one before it comes back afterwards)."""
    global _active
    before, recorder = _active, Recorder()
    _active = recorder
    try:
        yield recorder
    finally:
        _active = before
