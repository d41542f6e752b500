"""Run chaos scenarios and render their table; `python -m tests.reliability.run` (`make chaos`)
runs the long version and rewrites docs/reliability.md.

    .venv/bin/python -m tests.reliability.run [--only worker_sigkill,llm_faults] [--output PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tests.reliability.harness import HEADER, Tally, World
from tests.reliability.scenarios import SCENARIOS, Size
from tests.reliability.services import Postgres, Redis, ServiceUnavailable
from tests.support import ROOT

DOC = ROOT / "docs" / "reliability.md"
SHORT = {"postgres_restart": Size(prs=4, faults=1), "redis_restart": Size(prs=3, faults=2),
         "worker_sigkill": Size(prs=3, faults=2, llm_delay_s=0.5), "github_faults": Size(prs=3, faults=0, rate=0.15),
         "llm_faults": Size(prs=3, faults=0, rate=0.1)}
LONG = {"postgres_restart": Size(prs=24, faults=3, timeout_s=300),
        "redis_restart": Size(prs=20, faults=3, timeout_s=300),
        "worker_sigkill": Size(prs=20, faults=6, timeout_s=300, llm_delay_s=1.0),
        "github_faults": Size(prs=20, faults=0, rate=0.2, timeout_s=300),
        "llm_faults": Size(prs=20, faults=0, rate=0.15, timeout_s=300)}


def run_scenario(name: str, pg: Postgres, redis: Redis, tmp: Path, size: Size) -> tuple[Tally, str]:
    """One scenario in a fresh world: its tally and the workers' log tails."""
    with World(name, pg, redis, tmp, llm_delay_s=size.llm_delay_s) as w:
        faults = SCENARIOS[name](w, size)
        w.wait(size.timeout_s)
        return w.tally(faults), w.log_tail()


def markdown(tallies: Sequence[Tally], when: str) -> str:
    lines = [
        "# Reliability",
        "",
        "Written by `make chaos` (`python -m tests.reliability.run`); do not edit by hand. Each",
        "scenario runs the webhook service and two `rtcbot worker` processes on PostgreSQL and Redis",
        "servers of the suite's own, which it restarts or kills mid-run, against the fake GitHub",
        "and the scripted LLM, which fail at random on demand. What each scenario does and how a",
        "pull request is counted: the docstrings of tests/reliability/scenarios.py and harness.py.",
        "The short version runs in `make test` (tests/reliability/test_chaos.py).",
        "",
        f"- date: {when}",
        "- target: nothing lost, nothing doubled, every PR's check run completed (with a clear",
        "  error where the fault was permanent)",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(t.row()) + " |" for t in tallies]
    problems = [f"- {t.scenario}: {p}" for t in tallies for p in t.problems]
    if problems:
        lines += ["", "What did not go as it should, or ended with an error:", "", *problems]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.reliability.run", description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(SCENARIOS)}")
    ap.add_argument("--short", action="store_true", help="the sizes `make test` runs")
    ap.add_argument("--output", type=Path, default=DOC, help="the Markdown file to rewrite")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario {unknown[0]!r} (known: {', '.join(SCENARIOS)})")
    sizes = SHORT if args.short else LONG
    logging.getLogger("bot").setLevel(logging.CRITICAL)  # the in-process webhook service's tracebacks
    try:
        pg, redis = Postgres(), Redis()
    except ServiceUnavailable as e:
        print(f"chaos: {e}", file=sys.stderr)
        return 2
    tallies = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    try:
        pg.start()
        redis.start()
        for name in names:
            print(f"[chaos] {name} …", file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory(prefix=f"rtcbot-chaos-{name}-") as tmp:
                tally, _logs = run_scenario(name, pg, redis, Path(tmp), sizes[name])
            tallies.append(tally)
            print("  " + " | ".join(f"{h}: {v}" for h, v in zip(HEADER[1:], tally.row()[1:], strict=True)),
                  file=sys.stderr, flush=True)
    finally:
        redis.close()
        pg.close()
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = markdown(tallies, when)
    print(text)
    args.output.write_text(text, encoding="utf-8")
    print(f"[chaos] wrote {args.output}", file=sys.stderr)
    return 0 if all(t.lost == 0 and t.duplicates == 0 for t in tallies) else 1


if __name__ == "__main__":
    raise SystemExit(main())
