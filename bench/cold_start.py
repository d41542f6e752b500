"""Cold start: the first pull request of a fresh process, against its floor.

The other E2E rows measure a process in its steady state (the embedding model loaded and PMD's
server started before timing, a first PR run uncounted). A one-shot process (`rtcbot review`,
the Action's job) has no steady state: its first pull request starts every local tool it needs
(PMD's JVM, JSHint's Node, the sentence-embedding model: its tokenizer and weights
read into numpy: analyzers/crscore/bert.py) and is the only one. Here each chosen PR of the wide set (one Java,
one JavaScript, one Python: bench/data/prs) runs in a FRESH Python (`python -m bench.cold_start
--child NAME BASE_URL MODEL`), as `rtcbot review` runs one: the CLI's modules imported (what the
command has imported before it reads the change), the operator's tools from the environment, the
plan of bot/core/review.py (all three analyzers, the one LLM factory, no LLM cache) and then
`review_core.run` on the PR with its files at the head and the synthetic review comments of
bench/e2e_floor.py, timed (the work ahead of the analyzers, analyzers/registry.py `start_ahead`,
starts inside it, as in every review). The installed packages' bytecode is as scripts/install.sh
leaves it, compiled: a virtualenv without it (uv writes none) compiles every module a fresh
process imports from source: 4.3 CPU-s of the child against 2.3 with it (click). The LLM is the bench's latency
server at 400 ms in a process of its own (bench/llm_process.py), started once and shared by the
children, as a real endpoint is.

The floor is e2e_floor's: the largest critical path of sequential LLM latencies of the analyzers
that made a request (EditingRTC 2, CRScore 1, AutoFix 3). Reported: each PR's wall / floor in its
fresh process (target ≤ 1.20×), what was cold in it (the start-ups its spans show: the model's
load, the servers' starts, the tools' command lines) and, informational, the same PR run again in
the same process (a second PR: warm), which shows what the cold start added. The worst PR's
timeline is shown (bench/timeline.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analyzers.spans import Span
from bench import LATENCY_S, ROOT, Row, row, timeline
from bench.llm_process import LLMProcess

# one PR of each language whose synthetic comments all sit on its code (so CRScore's smells
# run that language's tool): Java (PMD), JavaScript (JSHint), Python (in-process detectors)
PRS: tuple[tuple[str, str], ...] = (("java", "gson-9d5d6a8f45"), ("javascript", "express-ee40a881f5"),
                                    ("python", "click-9835b0f761"))
QUICK_PRS = 1
TARGET = 1.20
CHILD_TIMEOUT_S = 300.0
# the stages of a start-up (a model's load, a server's start, a cold start begun for them) and
# the tools' command lines that start a program each run (PMD's: a JVM), by their words here
START_UPS = ("load the embedding model", "start the PMD server", "start the JSHint server", "cold start: ")
COMMAND_LINES = {"java": "PMD's command line (a JVM)", "semgrep": "Semgrep"}


# --------------------------------------------------------------------------- the fresh process
def child(name: str, base_url: str, model: str) -> dict[str, Any]:
    """In the fresh process: the PR through `review_core.run` as `rtcbot review` runs it, twice
    (cold, then warm); each run's start, wall, floor latencies, errors and spans."""
    import bot.cli.review  # noqa: F401 - what `rtcbot review` has imported before it reads the change
    from analyzers import spans
    from analyzers.llm.client import LLMSettings
    from bench import wide_set
    from bench.e2e_floor import ANALYZERS, CONCURRENCY, FLOOR_LATENCIES, synthetic_comments
    from bot.core import review as review_core
    from bot.core.config import LoadedConfig
    from bot.core.context import changes_from_diff, select
    from bot.core.llm import llm_factory
    from bot.core.settings import load_tools

    built = {w.source.name: w for w in wide_set.load()[0]}
    pr = built[name]
    tools = load_tools()
    loaded = LoadedConfig()
    changes = changes_from_diff(pr.diff.encode("utf-8"), loaded, ())
    settings = LLMSettings(base_url=base_url, model=model, cache_path=None, max_concurrency=CONCURRENCY,
                           retry_wait_initial=0.01, retry_wait_max=0.05)
    sel = select(loaded, defaults=ANALYZERS, explicit=ANALYZERS)
    plan = review_core.plan(loaded, sel, llm=llm_factory(settings))
    change = review_core.Change(changes, files=pr.head.get, comments=synthetic_comments(changes))
    runs = []
    for _ in range(2):
        with spans.recording() as rec:
            t0 = time.perf_counter()
            result = review_core.run(plan, change, tools=tools)
            wall = time.perf_counter() - t0
        floors = {r.name: FLOOR_LATENCIES.get(r.name, 1) if r.usage.get("requests", 0) else 0 for r in result.reports}
        runs.append({"t0": t0, "wall": wall, "floors": floors,
                     "errors": [f"{r.name}: {r.error}" for r in result.reports if r.error],
                     "spans": [[s.stage, s.start, s.end] for s in rec.taken()]})
    return {"name": name, "runs": runs}


# --------------------------------------------------------------------------- the bench's side
@dataclass
class Run:
    """One run of a PR in the child: its timeline, floor latencies and errors."""

    timeline: timeline.Timeline
    floor: int
    errors: list[str]

    @property
    def ratio(self) -> float:
        return self.timeline.ratio

    def start_ups(self) -> list[tuple[str, float]]:
        """The start-ups it paid (stage, seconds), longest first."""
        return sorted(((COMMAND_LINES.get(e.stage, e.stage), e.end - e.start) for e in self.timeline.entries
                       if e.stage.startswith(START_UPS) or e.stage in COMMAND_LINES), key=lambda x: -x[1])


@dataclass
class Measured:
    name: str
    language: str
    cold: Run
    warm: Run


def run_in_fresh_process(name: str, server: LLMProcess) -> dict[str, Any]:
    """The child's answer (its last line of output, JSON); RuntimeError with its stderr's end."""
    proc = subprocess.run([sys.executable, "-m", "bench.cold_start", "--child", name, server.base_url, server.model],
                          capture_output=True, text=True, cwd=ROOT, timeout=CHILD_TIMEOUT_S, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the fresh process for {name} failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def measure(picks: Sequence[tuple[str, str]] = PRS, delay_s: float = LATENCY_S) -> list[Measured]:
    """Each PR in a fresh process of its own, against one latency server."""
    out = []
    server = LLMProcess(delay_s)
    try:
        for language, name in picks:
            server.reset()
            answer = run_in_fresh_process(name, server)
            requests, served = server.requests, server.served
            runs = []
            for r in answer["runs"]:
                t0, wall = float(r["t0"]), float(r["wall"])
                mine = [s for s in served if t0 <= s[1] <= t0 + wall]
                floor = max(r["floors"].values(), default=0)
                spans = [Span(str(stage), float(a), float(b)) for stage, a, b in r["spans"]]
                runs.append(Run(timeline.build(name, t0, wall, floor * delay_s, requests, mine, spans),
                                floor, list(r["errors"])))
            out.append(Measured(name, language, runs[0], runs[1]))
    finally:
        server.stop()
    return out


def cold_words(run: Run) -> str:
    ups = run.start_ups()
    return ", ".join(f"{stage} {s:.1f} s" for stage, s in ups) if ups else "no start-up seen"


def rows_from(results: Sequence[Measured]) -> list[Row]:
    counted = [m for m in results if m.cold.floor]
    if not counted:
        return [row("Cold start: first PR of a fresh process, wall / floor", "no PR made an LLM request",
                    f"≤ {TARGET:.2f}×", False)]
    worst = max(counted, key=lambda m: m.cold.ratio)
    each = "; ".join(f"{m.name} ({m.language}) {m.cold.ratio:.2f}× (cold: {cold_words(m.cold)})" for m in counted)
    head = row(f"Cold start: the first PR of a fresh process (`rtcbot review`'s path, all analyzers, "
               f"LLM at {LATENCY_S * 1000:.0f} ms), wall / floor, {len(counted)} PRs",
               f"worst {worst.cold.ratio:.2f}× on {worst.name} ({worst.language}); {each}",
               f"each ≤ {TARGET:.2f}×", all(m.cold.ratio <= TARGET for m in counted))
    head["details"] = ("The worst first PR's timeline (seconds from the start of the review; LLM rounds from the "
                       "server's log, tools and start-ups from spans recorded where they ran):\n\n"
                       + timeline.render(worst.cold.timeline))
    rows = [head, row("Cold start: the same PRs again in the same process, a second PR (informational: warm)",
                      "; ".join(f"{m.name} {m.warm.ratio:.2f}× (cold {m.cold.ratio:.2f}×, "
                                f"+{m.cold.timeline.wall - m.warm.timeline.wall:.2f} s)" for m in counted))]
    errs = [f"{m.name}/{e}" for m in results for e in (*m.cold.errors, *m.warm.errors)]
    if errs:
        rows.append(row("Cold start analyzer errors", "; ".join(errs)[:300], "none", False))
    return rows


def run(quick: bool = False) -> list[Row]:
    from bench import wide_set

    built = {w.source.name for w in wide_set.load()[0]}
    picks = [(lang, name) for lang, name in PRS if name in built]
    if not picks:
        return [row("Cold start: first PR of a fresh process, wall / floor",
                    "not measured: the wide set's files are missing (python -m bench.wide_set)", f"≤ {TARGET:.2f}×",
                    None)]
    return rows_from(measure(picks[:QUICK_PRS] if quick else picks))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(child(*sys.argv[2:5])))
    else:
        for r in run("--quick" in sys.argv):
            print(r)
