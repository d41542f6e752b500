"""Live progress on long work, on stderr, for a person at a terminal.

`Live` shows what is done (analyzers, items), the LLM requests and tokens so far, and the time
elapsed, refreshed a few times a second while the work runs (an LLM request can take seconds:
a bar that only moves per item looks stuck). It is silent when stderr is not a terminal (a pipe,
CI, a log file) or with `--quiet`, so that machine-read output stays clean.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from analyzers.llm.client import Usage

UsageFn = Callable[[], Usage | None]  # the run's LLM usage so far (None: no LLM yet)
REFRESH_S = 0.25


def shown(stream: IO[str] | None = None, quiet: bool = False) -> bool:
    """Whether progress goes to `stream` (stderr): a terminal, and not --quiet."""
    s = stream or sys.stderr
    return not quiet and bool(getattr(s, "isatty", lambda: False)())


def usage_line(u: Usage | None) -> str:
    if u is None:
        return "no LLM requests yet"
    cached = f", {u.cache_hits:,} from the cache" if u.cache_hits else ""
    return f"{u.requests:,} LLM requests, {u.tokens:,} tokens{cached}"


def _nothing(n: int = 1) -> None:
    return None


class Live:
    """One progress display: a task per step, the LLM usage line refreshed on its own."""

    def __init__(self, progress: Progress | None, usage: UsageFn) -> None:
        self.progress, self.usage = progress, usage
        self._tasks: dict[str, TaskID] = {}

    def step(self, label: str, total: int | None = None) -> Callable[[int], None]:
        """A step of `total` items (None: unknown); returns `advance(n)`."""
        if self.progress is None:
            return _nothing
        task = self.progress.add_task(label, total=total, usage=usage_line(self.usage()))
        self._tasks[label] = task

        def advance(n: int = 1) -> None:
            assert self.progress is not None
            self.progress.advance(task, n)

        return advance

    def _refresh(self) -> None:
        if self.progress is None:
            return
        line = usage_line(self.usage())
        for task in self._tasks.values():
            self.progress.update(task, usage=line)


@contextmanager
def live(usage: UsageFn = lambda: None, *, quiet: bool = False, stream: IO[str] | None = None) -> Iterator[Live]:
    """A Live display on stderr while the block runs (a silent one when not `shown`)."""
    if not shown(stream, quiet):
        yield Live(None, usage)
        return
    console = Console(file=stream or sys.stderr)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[usage]}"), TimeElapsedColumn(), console=console, transient=False)
    display = Live(progress, usage)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(REFRESH_S):
            display._refresh()

    with progress:
        t = threading.Thread(target=tick, name="progress", daemon=True)
        t.start()
        try:
            yield display
        finally:
            stop.set()
            t.join()
            display._refresh()
