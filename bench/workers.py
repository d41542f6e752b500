"""Many workers: pull requests per minute with 1, 2 and 4 `rtcbot worker` processes, and exactly once.

Each configuration runs on a PostgreSQL and a Redis of its own (the fault-injection suite's
throw-away servers, tests/reliability/services.py: a fresh database, an empty queue), the
webhook service (the Flask app over real HTTP, in this process), the fake GitHub and the
latency-injecting LLM (`LATENCY_S` per request, `bench_responder`'s answers; every PR's
hunks are its own, so the LLM cache answers none of them). Every worker
process runs its default two jobs at a time, EditingRTC only, writes unspaced
(RTCBOT_WRITE_INTERVAL_S=0: the spacing is per process, so it would favour more processes).

The workers are started, and warmed up: two PRs per process run to completion, then the bench
waits until the workers' CPU use settles (their start-up loads the embedding model and PMD in
the background). Then `prs` pull requests of `HUNKS` hunks are delivered at once and the clock
runs from the first delivery until every check run is complete: PRs per minute. Afterwards
each PR must have exactly one check run, completed once, with one annotation per hunk.

    .venv/bin/python -m bench.workers [--quick] [--workers 1,2,4] [--prs-per-worker 24]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import Row, bench_responder, not_measured, row

if TYPE_CHECKING:
    from tests.reliability.harness import World

HUNKS = 3
# the LLM's latency per request: a hosted model's, so that the work is bound by waiting on it,
# as in production, and not by this (shared, small) machine's CPU
LATENCY_S = 2.0
THREADS = 2  # jobs at a time per worker process (RTCBOT_WORKERS' default)
TARGET_RATIO = 3.5
COUNTS = (1, 2, 4)


@dataclass
class Run:
    workers: int
    prs: int
    seconds: float
    exact: int  # PRs whose check run was made and completed once, with every annotation
    doubled: int
    lost: int
    worker_cpu_s: float = 0.0  # the worker processes' CPU time over the timed run
    harness_cpu_s: float = 0.0  # this process's: the webhook service, fake GitHub, LLM

    @property
    def per_minute(self) -> float:
        return self.prs / self.seconds * 60 if self.seconds > 0 else 0.0


def _cpu_ticks(pids: Sequence[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def settle(pids: Sequence[int], timeout: float = 90.0) -> None:
    """Wait until the processes use under 5% of a core over half a second (or `timeout`)."""
    deadline = time.monotonic() + timeout
    before = _cpu_ticks(pids)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _cpu_ticks(pids)
        if now - before <= 2:  # 100 ticks a second: 2 ticks in 0.5 s is 4% of a core
            return
        before = now


BACKENDS = ("redis", "sqlite")  # Redis + PostgreSQL; the embedded default (SQLite database and queue)


@contextmanager
def world(name: str, backend: str = "redis", **kwargs: Any) -> Iterator[World]:
    """The harness's World (`kwargs` are its own) on a PostgreSQL and a Redis of its own
    (`backend` "redis"), or on the embedded default, a SQLite database and queue in a
    temporary folder ("sqlite")."""
    from tests.reliability.harness import World
    from tests.reliability.services import Postgres, Redis

    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    quiet = logging.getLogger("bot")  # the in-process webhook service's lines, for the run only
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    pg, redis = (Postgres(), Redis()) if backend == "redis" else (None, None)
    try:
        if pg is not None and redis is not None:
            pg.start()
            redis.start()
        with tempfile.TemporaryDirectory(prefix=f"rtcbot-bench-{name}-") as tmp, \
                World(name, pg, redis, Path(tmp), **kwargs) as w:
            yield w
    finally:
        if pg is not None and redis is not None:
            redis.close()
            pg.close()
        quiet.setLevel(level)  # a test that runs a row in its process leaves the next ones their log


def measure(workers: int, prs: int, *, delay_s: float = LATENCY_S) -> Run:
    with world(f"bench{workers}", llm_delay_s=delay_s, hunks=HUNKS, threads=THREADS,
               responder=bench_responder) as w:
        procs = [w.start_worker() for _ in range(workers)]
        w.open_prs(range(1, 2 * workers + 1))  # warm-up
        if not w.wait(300):
            raise RuntimeError("the warm-up PRs did not complete")
        settle([p.pid for p in procs])
        warm = dict(w.heads)
        w.heads.clear()
        t0, ticks0, own0 = time.monotonic(), _cpu_ticks([p.pid for p in procs]), _own_cpu()
        w.open_prs(range(1000, 1000 + prs))
        finished = w.wait(600)
        seconds = time.monotonic() - t0 - (1.0 if finished else 0.0)  # wait() lingers 1 s for late duplicates
        worker_cpu = (_cpu_ticks([p.pid for p in procs]) - ticks0) / os.sysconf("SC_CLK_TCK")
        harness_cpu = _own_cpu() - own0
        tally = w.tally({})
        w.heads.update(warm)
        if any(p.poll() is not None for p in procs):
            raise RuntimeError("a worker exited:\n" + w.log_tail(2000))
        return Run(workers, prs, seconds, tally.completed - tally.errors - tally.duplicates, tally.duplicates,
                   tally.lost + tally.errors, worker_cpu, harness_cpu)


def rows_from(runs: Sequence[Run]) -> list[Row]:
    by = {r.workers: r for r in runs}
    one = by.get(1)
    out = [row(f"Many workers: PRs per minute with {' / '.join(str(r.workers) for r in runs)} `rtcbot worker` "
               f"processes ({THREADS} jobs each; Redis, PostgreSQL, LLM latency {LATENCY_S:g} s, {HUNKS} hunks a PR)",
               " / ".join(f"{r.per_minute:.0f}" for r in runs)
               + (" (" + ", ".join(f"{r.workers}: {r.per_minute / one.per_minute:.2f}×" for r in runs) + " of 1)"
                  if one and one.per_minute else ""))]
    most = max(by)
    if one and most > 1:
        ratio = by[most].per_minute / one.per_minute if one.per_minute else 0.0
        out.append(row(f"Many workers: throughput of {most} workers / 1 worker", f"{ratio:.2f}×",
                       f"≥ {TARGET_RATIO:g}×", ratio >= TARGET_RATIO))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    out.append(row("Many workers: CPU per PR, workers + harness (informational: the webhook service and the "
                   "fakes run in the bench's process; the ceiling is cores / CPU per PR)",
                   "; ".join(f"{r.workers}: {1000 * r.worker_cpu_s / r.prs:.0f} + "
                             f"{1000 * r.harness_cpu_s / r.prs:.0f} ms"
                             for r in runs if r.prs)
                   + f"; {cores} cores usable, load average {os.getloadavg()[0]:.1f}"))
    total = sum(r.prs for r in runs)
    exact = sum(r.exact for r in runs)
    doubled, lost = sum(r.doubled for r in runs), sum(r.lost for r in runs)
    out.append(row("Many workers: check runs completed exactly once", f"{exact} of {total} ({doubled} doubled, "
                   f"{lost} lost or failed)", "all", exact == total))
    return out


def run(quick: bool = False, *, counts: Sequence[int] = COUNTS, prs_per_worker: int | None = None) -> list[Row]:
    from tests.reliability.services import ServiceUnavailable

    per = prs_per_worker or (4 if quick else 16)
    runs = []
    for n in counts:
        try:
            runs.append(measure(n, per * n))
        except ServiceUnavailable as e:
            return [not_measured("Many workers: throughput of 4 workers / 1 worker", f"≥ {TARGET_RATIO:g}×", str(e))]
        print(f"  {n} worker(s): {runs[-1].prs} PRs in {runs[-1].seconds:.1f} s = {runs[-1].per_minute:.0f} /min",
              file=sys.stderr, flush=True)
    return rows_from(runs)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.workers", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", default=",".join(map(str, COUNTS)), help="worker process counts")
    ap.add_argument("--prs-per-worker", type=int, default=None)
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.workers.split(",") if x.strip()]
    for r in run(args.quick, counts=counts, prs_per_worker=args.prs_per_worker):
        print(f"{r['figure']}: {r['value']}  (target {r['target'] or '—'}, met {r['met']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
