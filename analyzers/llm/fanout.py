"""Calls run at once on threads that outlive a run: what `LLMClient.map` fans out on.

A pull request's round trips fan out twice (its hunks, then each hunk's requests), about 150
threads on a wide Java PR. Started afresh for every fan-out, as a `ThreadPoolExecutor` per
call does, each `Thread.start()` waits for the new thread to get the interpreter lock, which
on 2 cores busy with PMD, Semgrep and the other request threads held back the first LLM
round (bench/e2e_wide.py's timelines: on the worst PR the first round's last request went
out a median 0.28 s after the run's start, 0.08 s with threads kept; 8 runs each, alternated,
on a loaded machine). So the threads are kept in one pool for the process, and a fan-out
hands its calls to idle ones.

No fan-out can wait on a call that no thread will run (a fan-out inside a fan-out, with the
pool at its ceiling): the caller runs every call of its own that no thread has taken yet,
and waits only for those already running. So the ceiling bounds the threads, never the
progress; below it a fan-out runs `width` calls at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

CEILING = 1024  # threads in the pool at most; idle ones are reused, none is started before it is needed


def _new_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=CEILING, thread_name_prefix="rtcbot-fanout")


_POOL = _new_pool()


def _after_fork() -> None:
    """A forked child has none of the parent's threads: it starts a pool of its own (the
    parent's would count threads that are not there as idle, and never run a call)."""
    global _POOL
    _POOL = _new_pool()


os.register_at_fork(after_in_child=_after_fork)


class _Call(Generic[T, R]):
    """One item's call and what came of it."""

    __slots__ = ("done", "error", "item", "result")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = threading.Event()
        self.result: R | None = None
        self.error: BaseException | None = None


def fan_out(fn: Callable[[T], R], items: Sequence[T], width: int) -> list[R]:
    """fn over items, at most `width` at once, the results in the order of items; the first
    error (in that order) is raised once every call has ended. The caller is one of the
    `width` runners, each of which takes the next call no runner has taken until none is left."""
    calls: list[_Call[T, R]] = [_Call(x) for x in items]
    lock = threading.Lock()
    untaken = iter(calls)

    def runner() -> None:
        while True:
            with lock:
                call = next(untaken, None)
            if call is None:
                return
            try:
                call.result = fn(call.item)
            except BaseException as e:  # handed to the caller, as ThreadPoolExecutor.map does
                call.error = e
            finally:
                call.done.set()

    for _ in range(min(width, len(calls)) - 1):
        _POOL.submit(runner)
    runner()
    for call in calls:
        call.done.wait()
    for call in calls:
        if call.error is not None:
            raise call.error
    return [call.result for call in calls]  # type: ignore[misc]  # each ran without error
