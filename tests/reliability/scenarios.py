"""The fault-injection scenarios, each `scenario(world, size) -> faults injected by kind`.

Every scenario runs two `rtcbot worker` processes (two jobs at a time each) on the suite's own
PostgreSQL and Redis and opens `size.prs` pull requests of `world.hunks` hunks; the world's
tally (tests/reliability/harness.py) then says what was completed, doubled or lost.

- postgres_restart: PostgreSQL restarted (`pg_ctl stop -m fast`, down a moment) `size.faults`
  times during a burst of deliveries; refused deliveries are redelivered.
- redis_restart: every delivery queued with no worker running, then Redis (no persistence)
  restarted, so every queued message is gone; the workers start; Redis is restarted again
  mid-run `size.faults - 1` times.
- worker_sigkill: a worker SIGKILLed in the middle of an analysis `size.faults` times (a new
  one started each time).
- github_faults: GitHub answers 500, 502, 429 and 403 (secondary limit, Retry-After) to any
  request at random, and 422 to check-run updates (a permanent fault: that analysis must end
  with a clear error, its check run completed).
- llm_faults: the LLM answers 500, hangs and drops the connection, answers a body that is not
  JSON, or an empty one, at random.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from tests.reliability.harness import NOTE, World


@dataclass(frozen=True)
class Size:
    prs: int
    faults: int  # restarts, kills (the fault rate of the random scenarios is `rate`)
    rate: float = 0.1
    timeout_s: float = 120.0
    llm_delay_s: float = 0.2  # the LLM's latency per request


Scenario = Callable[[World, Size], dict[str, int]]


def postgres_restart(w: World, size: Size) -> dict[str, int]:
    w.start_worker()
    w.start_worker()
    sender = w.in_background(lambda: w.open_prs(range(1, size.prs + 1), gap_s=0.3))
    span = 0.3 * size.prs
    for i in range(size.faults):
        time.sleep(max(0.5, span / (size.faults + 1)))
        w.pg.restart(down_s=1.0 + (i % 2))
    sender.join(120)
    return {"PostgreSQL restarts": size.faults}


def redis_restart(w: World, size: Size) -> dict[str, int]:
    w.open_prs(range(1, size.prs + 1))
    lost = w.runtime.queue.pending()  # every message the restart takes away
    w.redis.restart(down_s=0.5)
    w.start_worker()
    w.start_worker()
    for _ in range(size.faults - 1):
        time.sleep(2.0)
        lost += w.runtime.queue.pending()
        w.redis.restart(down_s=0.5)
    return {"Redis restarts": size.faults, NOTE + "queued messages lost": lost}


def worker_sigkill(w: World, size: Size) -> dict[str, int]:
    w.start_worker()
    w.start_worker()
    # deliveries spread over the kills, so that each kill finds analyses running
    w.in_background(lambda: w.open_prs(range(1, size.prs + 1), gap_s=max(0.2, 1.5 * size.faults / size.prs)))
    rng = random.Random(7)
    kills = 0
    deadline = time.monotonic() + size.timeout_s / 2
    while kills < size.faults and time.monotonic() < deadline and not (w.all_done() and len(w.heads) == size.prs):
        if w.llm.in_flight > 0:  # some analysis is in the middle of its LLM requests
            victim = rng.choice(w.live_workers())
            w.kill_worker(victim)
            kills += 1
            w.start_worker()
            time.sleep(1.5)
        time.sleep(0.05)
    return {"workers SIGKILLed": kills}


def github_faults(w: World, size: Size) -> dict[str, int]:
    w.gh.chaos(size.rate, (500, 502, 429, 403), seed=11)
    w.gh.chaos(size.rate / 4, (422,), seed=12, match="PATCH /repos/")
    w.start_worker()
    w.start_worker()
    w.open_prs(range(1, size.prs + 1))
    w.wait(size.timeout_s)
    w.gh.chaos(0)
    return {f"HTTP {k}": v for k, v in sorted(w.gh.injected.items())}


def llm_faults(w: World, size: Size) -> dict[str, int]:
    w.llm.chaos(size.rate, ("500", "hang", "garbage", "empty"), seed=15, hang_s=1.5)
    w.start_worker()
    w.start_worker()
    w.open_prs(range(1, size.prs + 1))
    w.wait(size.timeout_s)
    w.llm.chaos(0)
    return dict(sorted(w.llm.injected.items()))


SCENARIOS: dict[str, Scenario] = {
    "postgres_restart": postgres_restart,
    "redis_restart": redis_restart,
    "worker_sigkill": worker_sigkill,
    "github_faults": github_faults,
    "llm_faults": llm_faults,
}
