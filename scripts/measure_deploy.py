"""Measure what docs/deploy.md quotes: the memory of `rtcbot serve` (all its processes) and of
one `rtcbot worker` (with PMD's JVM) after warm-up and after a pull request, and how long a job
takes to complete after its worker is stopped mid-job (SIGINT, SIGTERM, SIGKILL) and a new
worker started, with the documented default timings (RTCBOT_STALE_AFTER_S, RTCBOT_SWEEP_INTERVAL_S).

Runs the deployment as tests/deploy/stack.py does: the units' command lines and the env file,
the local PostgreSQL (127.0.0.1:5432, db test) and Redis (127.0.0.1:6379), the fake GitHub and
a scripted LLM endpoint. Memory is read from /proc: RSS (what `ps` shows; shared pages counted
in each process) and PSS (shared pages divided among their processes: what they add up to).

    .venv/bin/python scripts/measure_deploy.py [--skip-memory] [--skip-recovery]
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.deploy.stack import Stack, edits_diff  # noqa: E402

MIB = 1024 * 1024
CHECKS = ("rtcbot / EditingRTC", "rtcbot / CRScore", "rtcbot / AutoFix")
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it, from /proc/*/stat's parent ids."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = [pid], [pid]
    while frontier:
        children = [p for p, pp in parents.items() if pp in frontier]
        tree += children
        frontier = children
    return tree


def memory(pid: int) -> tuple[float, float, list[str]]:
    """(RSS MiB, PSS MiB, command names) of the process tree under `pid`."""
    rss = pss = 0
    names: list[str] = []
    for p in descendants(pid):
        try:
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
            names.append(Path(f"/proc/{p}/comm").read_text().strip())
        except OSError:
            continue
        fields = {ln.split(":")[0]: int(ln.split()[1]) for ln in rollup.splitlines()[1:] if ln.endswith("kB")}
        rss, pss = rss + fields.get("Rss", 0), pss + fields.get("Pss", 0)
    return rss * 1024 / MIB, pss * 1024 / MIB, names


def settled(pid: int, want: str | None = None, timeout: float = 240.0) -> tuple[float, float, list[str]]:
    """The tree's memory once `want` (a command name) is among it and RSS moved under 2 % in 5 s."""
    deadline, last = time.monotonic() + timeout, -1.0
    while time.monotonic() < deadline:
        rss, pss, names = memory(pid)
        if (want is None or want in names) and last > 0 and abs(rss - last) < 0.02 * rss:
            return rss, pss, names
        last = rss if want is None or want in names else -1.0
        time.sleep(5)
    return memory(pid)


def line(what: str, figures: tuple[float, float, list[str]]) -> str:
    rss, pss, names = figures
    return f"{what}: RSS {rss:.0f} MiB, PSS {pss:.0f} MiB, {len(names)} processes ({', '.join(sorted(names))})"


def measure_memory(tmp: Path) -> list[str]:
    stack = Stack(tmp)  # the env file's analyzers: the defaults (EditingRTC, CRScore, AutoFix)
    try:
        stack.start_serve()
        worker = stack.start_worker()
        serve = stack.procs["serve"]
        out = [line("serve after start", settled(serve.pid)),
               line("worker after warm-up", settled(worker.pid, want="java"))]
        for n in range(1, 4):
            head = stack.open_pr(n, edits_diff(n, hunks=3))
            for check in CHECKS:
                stack.wait_status(head, "completed", timeout=600, name=check)
        out += [line("serve after 3 pull requests", memory(serve.pid)),
                line("worker after 3 pull requests (3 analyses each)", settled(worker.pid, want="java"))]
        return out
    finally:
        stack.close()


def measure_recovery(tmp: Path, how: str) -> str:
    """Seconds from stopping the worker mid-job to the job's check run completed by a worker
    started again (at once; after the old one exited, as systemd restarts a unit)."""
    stack = Stack(tmp, llm_delay_s=0.3, overrides={"RTCBOT_ANALYZERS": "editing_rtc", "RTCBOT_LLM_CONCURRENCY": "1"})
    try:
        stack.start_serve()
        stack.start_worker("worker")
        head = stack.open_pr(1, edits_diff(1, hunks=6))
        stack.wait_status(head, "in_progress", timeout=120)
        time.sleep(1.0)
        t0 = time.monotonic()
        stack.stop("worker", SIGNALS[how], timeout=300)
        exited = time.monotonic() - t0
        done_by_old = stack.run_status(head) == "completed"
        if not done_by_old:
            stack.start_worker("worker-2")
            stack.wait_status(head, "completed", timeout=600)
        total = time.monotonic() - t0
        who = "the stopping worker finished it" if done_by_old else "a new worker completed it"
        return (f"{how}: job completed {total:.1f} s after the signal ({who}; "
                f"the old worker exited after {exited:.1f} s)")
    finally:
        stack.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-recovery", action="store_true")
    args = parser.parse_args()
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}: {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="rtcbot-measure-") as tmp:
        if not args.skip_memory:
            for text in measure_memory(Path(tmp) / "memory"):
                print(text, flush=True)
        if not args.skip_recovery:
            for how in SIGNALS:
                (Path(tmp) / how).mkdir()
                print(measure_recovery(Path(tmp) / how, how), flush=True)


if __name__ == "__main__":
    main()
