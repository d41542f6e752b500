"""Progress on long work, on stderr: live on a terminal, a line at a time in a pipe or a CI log.

On a terminal, `Live` shows what is done (analyzers, items), the LLM requests and tokens so far,
and the time elapsed, refreshed a few times a second while the work runs (an LLM request can take
seconds: a bar that only moves per item looks stuck). Where stderr is not a terminal (a pipe, a
CI log, a log file) it writes one plain line every `every` seconds (30 by default,
RTCBOT_PROGRESS_S) — what is done, the requests, the time elapsed — so that a long run never
looks hung, and, when it wrote any, one more with the whole run's as the work ends (a short
run writes none); the machine-read output on stdout is untouched. `--quiet` silences both.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import IO, Any

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

from analyzers.context import AnalysisContext
from analyzers.llm.client import Usage
from analyzers.report import AnalyzerReport
from bot.core.review import Output, Result
from bot.core.settings import SettingsError, load_log_settings
from reporters.base import Target

UsageFn = Callable[[], Usage | None]  # the run's LLM usage so far (None: no LLM yet)
REFRESH_S = 0.25
EVERY_S = 30.0  # a progress line in a pipe or a CI log at least this often


def is_terminal(stream: IO[str] | None = None) -> bool:
    s = stream or sys.stderr
    return bool(getattr(s, "isatty", lambda: False)())


def shown(stream: IO[str] | None = None, quiet: bool = False) -> bool:
    """Whether the live display goes to `stream` (stderr): a terminal, and not --quiet."""
    return not quiet and is_terminal(stream)


def usage_line(u: Usage | None) -> str:
    if u is None:
        return "no LLM requests yet"
    cached = f", {u.cache_hits:,} from the cache" if u.cache_hits else ""
    return f"{u.requests:,} LLM requests, {u.tokens:,} tokens{cached}"


def elapsed(seconds: float) -> str:
    """0:00:07, 1:02:03: the time a run has taken."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def every_s() -> float:
    """How often a progress line is written where stderr is no terminal (RTCBOT_PROGRESS_S)."""
    try:
        return load_log_settings().progress_s
    except SettingsError:  # said, with the exit, as the command started
        return EVERY_S


def _nothing(n: int = 1) -> None:
    return None


class Live:
    """One progress display: a task per step, the LLM usage line refreshed on its own. With
    no rich display (a pipe), `line()` says the same in one line of words."""

    def __init__(self, progress: Progress | None, usage: UsageFn, *, counting: bool = False) -> None:
        self.progress, self.usage = progress, usage
        self._tasks: dict[str, TaskID] = {}
        self._counts: dict[str, list[int | None]] = {}  # label → [done, total] (line mode)
        self._counting = counting
        self._started = time.monotonic()

    def step(self, label: str, total: int | None = None) -> Callable[[int], None]:
        """A step of `total` items (None: unknown); returns `advance(n)`."""
        if self.progress is None:
            if not self._counting:
                return _nothing
            count: list[int | None] = [0, total]
            self._counts[label] = count

            def tally(n: int = 1) -> None:
                count[0] = (count[0] or 0) + n

            return tally
        task = self.progress.add_task(label, total=total, usage=usage_line(self.usage()))
        self._tasks[label] = task

        def advance(n: int = 1) -> None:
            assert self.progress is not None
            self.progress.advance(task, n)

        return advance

    def line(self) -> str:
        """What is done, the LLM usage and the time elapsed, in one line."""
        steps = "; ".join(f"{label}: {done:,}" + (f" of {total:,} done" if total is not None else " done")
                          for label, (done, total) in self._counts.items()) or "starting"
        return f"rtcbot: progress: {steps} · {usage_line(self.usage())} · {elapsed(time.monotonic() - self._started)}" \
               " elapsed"

    def _refresh(self) -> None:
        if self.progress is None:
            return
        line = usage_line(self.usage())
        for task in self._tasks.values():
            self.progress.update(task, usage=line)


@contextmanager
def _ticking(every: float, tick: Callable[[], None]) -> Iterator[None]:
    """`tick()` every `every` seconds on a thread of its own while the block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            tick()

    t = threading.Thread(target=loop, name="progress", daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


@contextmanager
def live(usage: UsageFn = lambda: None, *, quiet: bool = False, stream: IO[str] | None = None,
         every: float | None = None) -> Iterator[Live]:
    """A Live display on stderr while the block runs: rich on a terminal, a line every `every`
    seconds elsewhere (None: RTCBOT_PROGRESS_S, 30 s by default), nothing with `quiet`."""
    out = stream or sys.stderr
    if quiet:
        yield Live(None, usage)
        return
    if not is_terminal(out):
        display = Live(None, usage, counting=True)
        said: list[bool] = []

        def say() -> None:
            print(display.line(), file=out, flush=True)
            said.append(True)

        with _ticking(every or every_s(), say):
            yield display
        if said:  # a log that showed progress ends with the whole run's
            say()
        return
    console = Console(file=out)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[usage]}"), TimeElapsedColumn(), console=console, transient=False)
    display = Live(progress, usage)
    with progress:
        try:
            with _ticking(REFRESH_S, display._refresh):
                yield display
        finally:
            display._refresh()


class Progressing(Output):
    """A review's progress as its first output: shown from `start` (the analyses of `hunks`
    hunks, one step each, the LLM's usage once its context is made), closed before any other
    output prints."""

    def __init__(self, hunks: int, *, quiet: bool = False) -> None:
        self.hunks, self.quiet = hunks, quiet
        self.stack = ExitStack()
        self.usage: list[Callable[[], Any]] = []
        self.advance: Callable[[int], None] = _nothing

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        display = self.stack.enter_context(live(lambda: self.usage[0]() if self.usage else None, quiet=self.quiet))
        n, hunks = len(titles), self.hunks
        self.advance = display.step(f"{n} analys{'es' if n != 1 else 'is'} of {hunks} hunk{'s' if hunks != 1 else ''}",
                                    total=n)

    def done(self, report: AnalyzerReport) -> None:
        self.advance(1)

    def context(self, ctx: AnalysisContext) -> None:
        self.usage.append(lambda: ctx.llm.usage if ctx.has_llm else None)

    def publish(self, result: Result, target: Target) -> None:
        self.stack.close()

    def abandon(self, why: str) -> None:
        self.stack.close()
