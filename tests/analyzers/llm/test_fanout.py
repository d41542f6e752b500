"""Fan-outs on kept threads (analyzers/llm/fanout.py): the order and the errors of
ThreadPoolExecutor.map, at most `width` at once, threads reused, and no fan-out inside a
fan-out stuck when the pool is at its ceiling."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from analyzers.llm import fanout
from analyzers.llm.fanout import fan_out


def test_results_in_order_at_most_width_at_once() -> None:
    running, most, lock = 0, 0, threading.Lock()
    four_at_once = threading.Event()

    def slow_square(x: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            if running == 4:
                four_at_once.set()
        # the first calls wait for the fourth: a loaded machine may wake a runner later than a
        # 0.02 s call lasts, and the others would have taken its items (a width under 4 waits
        # out the timeout and fails below)
        four_at_once.wait(timeout=10)
        time.sleep(0.02)
        with lock:
            running -= 1
        return x * x

    assert fan_out(slow_square, list(range(12)), width=4) == [x * x for x in range(12)]
    assert most == 4
    assert fan_out(slow_square, [], width=4) == []


def test_the_first_error_in_order_is_raised_after_every_call_ended() -> None:
    ended: list[int] = []

    def fail_odd(x: int) -> int:
        time.sleep(0.01 * (5 - x))  # the later items end first
        ended.append(x)
        if x % 2:
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 1"):
        fan_out(fail_odd, [0, 1, 2, 3, 4], width=5)
    assert sorted(ended) == [0, 1, 2, 3, 4]


def wait_idle(threads: int) -> None:
    """Until the pool counts `threads` idle ones (the idle count a submit takes instead of
    starting a thread), however long a loaded machine takes to bring them back to it."""
    idle = fanout._POOL._idle_semaphore  # noqa: SLF001
    taken = 0
    try:
        for _ in range(threads):
            assert idle.acquire(timeout=30), "the pool's threads did not go idle"
            taken += 1
    finally:
        for _ in range(taken):
            idle.release()


def test_a_second_fan_out_starts_no_thread() -> None:
    def nap(x: int) -> int:
        time.sleep(0.02)
        return x

    fan_out(nap, list(range(8)), width=8)  # starts what the pool lacks
    wait_idle(7)  # the pool's threads go idle (a fixed 0.1 s was not always enough)
    before = set(threading.enumerate())
    names: set[str] = set()
    # each call holds its thread until all 8 run: on a loaded machine a 0.02 s nap could end
    # before the last runner woke, and another would take its call
    all_in = threading.Barrier(8, timeout=30)

    def named(x: int) -> int:
        names.add(threading.current_thread().name)
        all_in.wait()
        return nap(x)

    assert fan_out(named, list(range(8)), width=8) == list(range(8))
    assert set(threading.enumerate()) - before == set()  # no thread started (one that ended is no matter)
    assert len(names) == 8 and sum(n.startswith("rtcbot-fanout") for n in names) == 7  # and the caller


def test_fan_outs_inside_fan_outs_finish_with_the_pool_at_its_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    tiny = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tiny")
    monkeypatch.setattr(fanout, "_POOL", tiny)
    got: list[list[int]] = []

    def outer(x: int) -> list[int]:  # each holds a thread while its own fan-out runs
        def inner(y: int) -> int:
            time.sleep(0.005)
            return x * 10 + y

        return fan_out(inner, list(range(4)), width=4)

    worker = threading.Thread(target=lambda: got.append(sum(fan_out(outer, list(range(6)), width=6), [])))
    worker.start()
    worker.join(timeout=20)
    tiny.shutdown(wait=False)
    assert not worker.is_alive(), "a fan-out waited on a call no thread would run"
    assert got == [[x * 10 + y for x in range(6) for y in range(4)]]
