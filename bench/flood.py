"""Fair under a flood: installation B's first check run while installation A's burst is queued,
and the throughput of a burst from one installation against the same PRs spread over two.

The `workers` row's world (tests/reliability/harness.py's World), on each backend in turn: a
PostgreSQL and a Redis of its own ("redis"), then the embedded default, a SQLite database and a
SQLite queue in a temporary folder shared by every process ("sqlite"); the webhook service over
real HTTP in this process, `WORKERS` `rtcbot worker` processes of `THREADS` jobs each,
EditingRTC only, the latency-injecting LLM (`LATENCY_S` per request, `QUICK_LATENCY_S` in a quick
run; the harness's model that re-creates each one-line hunk, so that every hunk is annotated, as
`bench_responder` does for EditingRTC) and the fake GitHub with two installations (A's repository and B's,
`FakeGitHub.install`), `HUNKS` hunks a PR, none seen before.

After a warm-up (a PR per slot, then the workers' CPU settles), four runs, one after another:

- **control**: B opens one PR, then A opens `BURST`; B's wait is from its delivery to its check
  run's creation (and to its completion: the difference is one job's length);
- **flood**: A opens `BURST` PRs (delivered one after another, in a thread) and B opens one
  1 s after A's first delivery; B's wait, as above. Target (issue #52): within `LIMIT_S` and
  within 3× the control's plus one job's length;
- **burst / spread**: `FACTOR`× the slots of PRs delivered at once, all from A, then as many
  alternating A and B; PRs per minute from the first delivery to the last check run complete.
  Target: the burst's rate not lower than the spread's by more than 5 %.

Afterwards every PR must have exactly one check run, completed once, with its annotations.
Each backend gives its three rows; the SQLite ones say so in their names.

    .venv/bin/python -m bench.flood [--quick] [--backends redis,sqlite]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench import Row, not_measured, row
from bench.workers import BACKENDS, settle, world

if TYPE_CHECKING:
    from tests.reliability.harness import World

A, B, B_REPO = 77, 88, "other-org/tools"  # A is the fake GitHub's first installation
HUNKS = 3
LATENCY_S = 1.0
QUICK_LATENCY_S = 0.25  # a quick run's LLM: every figure, a quarter of the waiting (its rows name it)
WORKERS, THREADS = 2, 2
SLOTS = WORKERS * THREADS
LIMIT_S = 10.0
TOLERANCE = 0.05


@dataclass
class Wait:
    """B's pull request: seconds from its delivery to its check run's creation and completion."""

    created_s: float
    completed_s: float

    @property
    def job_s(self) -> float:
        return self.completed_s - self.created_s


@dataclass
class Flood:
    burst: int  # A's PRs in the flood
    control: Wait
    flood: Wait
    prs: int  # PRs in each throughput run
    burst_per_min: float
    spread_per_min: float
    exact: int
    total: int
    doubled: int
    lost: int
    load: float  # the load average (1 min) at the end
    backend: str = "redis"  # bench.workers.BACKENDS
    latency_s: float = LATENCY_S  # the LLM's, per request


def _b_wait(w: World, sha: str, since: float) -> Wait:
    created = min(r.at for r in w.gh.requests if r.method == "POST" and r.path.endswith("/check-runs")
                  and isinstance(r.body, dict) and r.body.get("head_sha") == sha and r.status == 201)
    ids = {run["id"] for run in w.gh.runs(head_sha=sha)}
    completed = min(r.at for r in w.gh.requests if r.method == "PATCH" and isinstance(r.body, dict)
                    and r.body.get("conclusion") and int(r.path.rsplit("/", 1)[1]) in ids)
    return Wait(created - since, completed - since)


def _case(w: World, numbers: Iterator[int], burst: int, *, b_first: bool) -> Wait:
    """A's burst and B's one PR (first, or 1 s into A's burst): B's wait."""
    a_prs = [next(numbers) for _ in range(burst)]
    b_pr = next(numbers)

    def a_burst() -> None:
        for n in a_prs:
            w.open_pr(n)

    if b_first:
        since = time.time()
        w.open_pr(b_pr, installation=B)
        a_burst()
    else:
        t = threading.Thread(target=a_burst, daemon=True)
        start = time.monotonic()
        t.start()
        time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
        since = time.time()
        w.open_pr(b_pr, installation=B)
        t.join()
    if not w.wait(600):
        raise RuntimeError("the flood's PRs did not complete")
    return _b_wait(w, w.heads[b_pr], since)


def _rate(w: World, numbers: Iterator[int], prs: int, *, spread: bool) -> float:
    """PRs per minute for `prs` delivered at once: all A's, or alternating A's and B's."""
    t0 = time.monotonic()
    for i in range(prs):
        w.open_pr(next(numbers), installation=B if spread and i % 2 else None)
    if not w.wait(600):
        raise RuntimeError("the throughput run's PRs did not complete")
    seconds = time.monotonic() - t0 - 1.0  # wait() lingers 1 s for late duplicates
    return prs / seconds * 60 if seconds > 0 else 0.0


def measure(burst: int, prs: int, backend: str = "redis", latency_s: float = LATENCY_S) -> Flood:
    with world(f"flood_{backend}", backend, llm_delay_s=latency_s, hunks=HUNKS, threads=THREADS) as w:
        w.gh.install(B, B_REPO)
        procs = [w.start_worker() for _ in range(WORKERS)]
        numbers = itertools.count(1)
        for i in range(SLOTS):  # warm-up, both installations
            w.open_pr(next(numbers), installation=B if i % 2 else None)
        if not w.wait(300):
            raise RuntimeError("the warm-up PRs did not complete")
        settle([p.pid for p in procs])
        control = _case(w, numbers, burst, b_first=True)
        flood = _case(w, numbers, burst, b_first=False)
        burst_rate = _rate(w, numbers, prs, spread=False)
        spread_rate = _rate(w, numbers, prs, spread=True)
        tally = w.tally({})
        for problem in tally.problems[:3]:  # why a check run is not counted exactly once
            print(f"  {problem}", file=sys.stderr, flush=True)
        if any(p.poll() is not None for p in procs):
            raise RuntimeError("a worker exited:\n" + w.log_tail(2000))
        return Flood(burst, control, flood, prs, burst_rate, spread_rate,
                     tally.completed - tally.errors - tally.duplicates, tally.prs, tally.duplicates,
                     tally.lost + tally.errors, os.getloadavg()[0], backend, latency_s)


STORES = {"redis": "Redis, PostgreSQL", "sqlite": "SQLite database and queue"}


def rows_from(f: Flood) -> list[Row]:
    bound = min(LIMIT_S, 3 * f.control.created_s + f.control.job_s)
    setup = (f"{WORKERS} `rtcbot worker` × {THREADS} jobs, {STORES[f.backend]}, LLM {f.latency_s:g} s, "
             f"{HUNKS} hunks a PR")
    on = "" if f.backend == "redis" else f" ({STORES[f.backend]})"  # the Redis rows keep their names
    ratio = f.burst_per_min / f.spread_per_min if f.spread_per_min else 0.0
    return [
        row(f"Flood: B's first check run created, B's one PR opened 1 s into A's burst of {f.burst} ({setup})",
            f"{f.flood.created_s:.1f} s (completed {f.flood.completed_s:.1f} s); B alone first: "
            f"{f.control.created_s:.1f} s (completed {f.control.completed_s:.1f} s)",
            f"≤ {LIMIT_S:g} s and ≤ 3× B alone + one job ({bound:.1f} s)", f.flood.created_s <= bound),
        row(f"Flood: PRs per minute, a burst of {f.prs} ({f.prs // SLOTS}× the {SLOTS} slots) from one "
            f"installation / the same spread over two{on}",
            f"{f.burst_per_min:.0f} / {f.spread_per_min:.0f} = {ratio:.2f}× (load average {f.load:.1f})",
            f"≥ {1 - TOLERANCE:.2f}×", ratio >= 1 - TOLERANCE),
        row(f"Flood: check runs completed exactly once{on}", f"{f.exact} of {f.total} ({f.doubled} doubled, "
            f"{f.lost} lost or failed)", "all", f.exact == f.total),
    ]


def run(quick: bool = False, backends: Sequence[str] = BACKENDS) -> list[Row]:
    """The rows of each backend in `backends`, Redis's first (one row saying why, for a backend
    whose servers could not be started)."""
    from tests.reliability.services import ServiceUnavailable

    burst, prs, latency_s = (12, 2 * SLOTS, QUICK_LATENCY_S) if quick else (60, 10 * SLOTS, LATENCY_S)
    out: list[Row] = []
    for backend in backends:
        try:
            f = measure(burst, prs, backend, latency_s)
        except ServiceUnavailable as e:
            on = "" if backend == "redis" else f" ({STORES[backend]})"
            out.append(not_measured(f"Flood: B's first check run created under A's burst{on}", f"≤ {LIMIT_S:g} s",
                                    str(e)))
            continue
        print(f"  flood ({backend}): B created at {f.flood.created_s:.1f} s (alone {f.control.created_s:.1f} s); "
              f"{f.burst_per_min:.0f} / {f.spread_per_min:.0f} PRs per minute", file=sys.stderr, flush=True)
        out += rows_from(f)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.flood", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backends", default=",".join(BACKENDS), help=f"a comma-separated subset of {', '.join(BACKENDS)}")
    args = ap.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in BACKENDS for b in backends):
        ap.error(f"--backends takes a comma-separated subset of {', '.join(BACKENDS)}, not {args.backends!r}")
    for r in run(args.quick, backends):
        print(f"{r['figure']}: {r['value']}  (target {r['target'] or '—'}, met {r['met']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
