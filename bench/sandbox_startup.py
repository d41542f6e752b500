"""Sandbox start-up cost: a "hello world" run in bubblewrap / the same run without isolation.

The peer is the `none` mode: the launcher alone (clean environment, rlimits, a fork and an
exec of the program, the whole-run watchdog), which is how every run started before the
sandbox (issue #21) minus its network namespace. Two figures, in one process, alternating
the modes so that the machine's noise falls on both alike:

- one run: `Sandbox.run` of `python -I -c "print('hello')"`, one at a time, median of
  `runs` runs per mode; ratio = bwrap / none (and userns / none, informational);
- executor throughput: `Executor.run_many` over `cases` hello-world stdio cases (each a
  distinct input, so no cache hit) with one worker per usable core; ratio = bwrap wall /
  none wall, best of 3. This is the figure the eval commands feel; with it, what bwrap adds
  to one case in ms of a worker's time (the ratio falls when the shared path gets slower and
  rises when it gets faster: the launcher's start-up, paid in both modes, went from ~15 to
  ~8 ms of CPU when it stopped importing json and signal).

bwrap runs in warm runners (analyzers/sandbox/runner.py): bubblewrap and the launcher's
Python start once per worker and executor, inside the timing, and each case then pays a
fork and its own namespaces and mounts, not the launcher's start-up, so a case can take less
than with none. The last row times bubblewrap started afresh for every case (`reuse=False`,
the way before the runners, and still the way where a runner cannot start), in the same
alternation.
"""

from __future__ import annotations

import os
import statistics
import time

from analyzers.execution.oracle import Case, Executor, Limits, Program
from analyzers.sandbox.box import Sandbox, SandboxUnavailable
from bench import Row, not_measured, row

LIMITS = Limits(wall_s=10, cpu_s=10, memory_mb=512, nproc=32)
HELLO = ["{python}", "-I", "-c", "print('hello')"]


def _sandboxes() -> dict[str, Sandbox]:
    out = {"none": Sandbox(slots=1, mode="none")}
    for mode in ("bwrap", "userns"):
        try:
            out[mode] = Sandbox(slots=1, mode=mode)
        except SandboxUnavailable:
            continue
    return out


def one_run_ms(boxes: dict[str, Sandbox], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {m: [] for m in boxes}
    for _ in range(runs):
        for mode, box in boxes.items():
            t0 = time.perf_counter()
            raw, _ = box.run(HELLO, limits=LIMITS)
            times[mode].append(time.perf_counter() - t0)
            assert raw.stdout == b"hello\n", (mode, raw.stderr[-300:])
    return {m: statistics.median(t) * 1000 for m, t in times.items()}


def executor_s(mode: str, cases: int, workers: int, salt: str) -> float:
    """Wall seconds of `cases` hello-world cases; mode "once" is bwrap without warm runners."""
    box = Sandbox(slots=workers, mode="bwrap", reuse=False) if mode == "once" else None
    ex = Executor(LIMITS, workers=workers, sandbox_mode=mode, sandbox=box)
    prog = Program("python", "print(input())\n")
    ex.compile(prog)  # the compile check once, outside the timing
    todo = [Case(stdin=f"{salt}{i}", expected_output=f"{salt}{i}") for i in range(cases)]
    t0 = time.perf_counter()
    results = ex.run_cases(prog, todo)
    wall = time.perf_counter() - t0
    assert all(r.verdict == "AC" for r in results), [r.detail for r in results if r.verdict != "AC"][:3]
    return wall


def run(quick: bool = False) -> list[Row]:
    figure = "Sandbox: one hello-world run, bwrap / none (no isolation)"
    tput = "Sandbox: executor throughput, hello-world cases, bwrap wall / none wall"
    boxes = _sandboxes()
    if "bwrap" not in boxes:
        why = "bwrap cannot run here"
        return [not_measured(figure, "informational", why), not_measured(tput, "≤ 1.05×", why)]
    runs, cases = (10, 16) if quick else (40, 64)
    ms = one_run_ms(boxes, runs)
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    walls: dict[str, list[float]] = {"none": [], "bwrap": [], "once": []}
    for rep in range(3):
        for mode in ("none", "bwrap", "once") if rep % 2 == 0 else ("once", "bwrap", "none"):
            walls[mode].append(executor_s(mode, cases, workers, f"{mode}{rep}-"))
    best = {m: min(w) for m, w in walls.items()}
    ratio = best["bwrap"] / best["none"]
    per_case = {m: w / cases * workers * 1000 for m, w in best.items()}
    rows = [
        row(figure, f"{ms['bwrap'] / ms['none']:.2f}× (median {ms['bwrap']:.1f} ms / {ms['none']:.1f} ms, "
                    f"{runs} runs each)", "informational", None),
        row(tput, f"{ratio:.2f}× ({cases / best['bwrap']:.1f} / {cases / best['none']:.1f} cases per s, "
                  f"{workers} workers, best of 3)", "≤ 1.05×", ratio <= 1.05),
        row("Sandbox: what bwrap adds to one case, ms of a worker's time (informational: the ratio "
            "above also moves with the cost of the path both modes share)",
            f"{per_case['bwrap'] - per_case['none']:.1f} ms (a case takes {per_case['bwrap']:.1f} ms "
            f"in bwrap, {per_case['none']:.1f} ms with none)", "≤ 3 ms", per_case["bwrap"] - per_case["none"] <= 3),
        row("Sandbox: what bubblewrap started afresh for each case adds (no warm runner; informational)",
            f"{per_case['once'] - per_case['none']:.1f} ms (a case takes {per_case['once']:.1f} ms)", "—", None),
    ]
    if "userns" in ms:
        rows.insert(1, row("Sandbox: one hello-world run, userns fallback / none (informational)",
                           f"{ms['userns'] / ms['none']:.2f}× (median {ms['userns']:.1f} ms)", "—", None))
    return rows


if __name__ == "__main__":
    for r in run(quick=True):
        print(f"{r['figure']}: {r['value']} (target {r['target']}, met {r['met']})")
