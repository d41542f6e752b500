"""E2E on the wide set: real commits from repositories the benchmark was never tuned on.

The PRs are those of bench/data/prs/SOURCES.md (kept in the repository; made with
`python -m bench.wide_set`, see its doc), each with the changed files at its head as the
analyzers' file loader, and the synthetic review comments of bench/e2e_floor.py. Each PR
runs once through `pipeline.run_all` (all analyzers at once) against the latency-injecting
LLM server at 400 ms in a process of its own (bench/llm_process.py), as in
bench/e2e_floor.py (the same floor: EditingRTC 2, CRScore 1, AutoFix 3 latencies, the
largest that made a request), but once only: no second, threaded run and no tools timed
apart, because the timeline shows where each tool ran. The embedding model and the PMD server
are loaded first, and the first PR runs once uncounted (as bench/e2e_floor.py's App run
warms its worker up), so that each PR is measured as a worker in its steady state runs it.

Reported: the mean, median and worst of the per-PR ratios (wall / floor; targets: mean
≤ 1.10×, worst ≤ 1.30×), the aggregate (total wall / total floor), the stage that made the
worst PR slow, and the timelines of the worst three (bench/timeline.py: from the server's
request log and the spans recorded where each local tool ran, `analyzers.spans`). Then the
worst three again, alternately against the server in the bench's own process (as the
benchmark ran before: the server's per-request work took the interpreter lock from the
pipeline) and in its own: what that harness added to the old worst.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from analyzers import pipeline, spans
from analyzers.code.diff import parse_diff
from bench import LATENCY_S, Row, row, timeline, wide_set
from bench.e2e_floor import (
    ANALYZERS,
    PR,
    PRResult,
    Timed,
    context,
    latency_server,
    synthetic_comments,
    warm_up,
)
from bench.llm_process import LatencyServer, LLMProcess

QUICK_PRS = 3  # PRs of the wide set in a quick run
MEAN_TARGET, WORST_TARGET = 1.10, 1.30  # of the per-PR ratios
TARGETS = f"mean ≤ {MEAN_TARGET:.2f}×, worst ≤ {WORST_TARGET:.2f}×"


def load(folder: Path = wide_set.WIDE) -> tuple[list[tuple[PR, str]], list[str]]:
    """The built PRs of the wide set with their language, and the names not built."""
    built, missing = wide_set.load(folder)
    prs = []
    for w in built:
        changes = parse_diff(w.diff)
        prs.append((PR(w.source.name, changes, synthetic_comments(changes), head=w.head), w.source.language))
    return prs, missing


def measure(prs: Sequence[PR], names: Sequence[str] = ANALYZERS, delay_s: float = LATENCY_S,
            server_of: Callable[[float], LatencyServer] = LLMProcess) -> list[tuple[PRResult, timeline.Timeline]]:
    """Each PR once, with its timeline, against `server_of(delay_s)` (by default the latency
    server in a process of its own, as a real endpoint is)."""
    out = []
    server = server_of(delay_s)
    try:
        for pr in prs:
            server.reset()
            ctx = context(pr, server)
            with spans.recording() as rec:
                t0 = time.perf_counter()
                reports = pipeline.run_all(list(names), pr.changes, ctx)
                wall = time.perf_counter() - t0
            requests, served = server.requests, server.served
            res = PRResult(pr, Timed(wall, reports, len(requests)))
            out.append((res, timeline.build(pr.name, t0, wall, res.floor * delay_s, requests, served,
                                            rec.taken())))
    finally:
        server.stop()
    return out


def rows_from(results: Sequence[tuple[PRResult, timeline.Timeline]], languages: dict[str, str],
              repos: int) -> list[Row]:
    timelines = [t for _, t in results]
    summary = timeline.summarise(timelines)
    if summary is None:
        return [row("E2E wide set wall / floor", "no PR made an LLM request", TARGETS, False)]
    counted = [t for t in timelines if t.floor_s]
    langs = sorted({languages[t.name] for t in counted})
    worst3 = timeline.worst(timelines)
    head = row(f"E2E wide set (all analyzers, {len(counted)} real PRs from {repos} repositories: "
               f"{', '.join(langs)}) wall / floor, LLM at {LATENCY_S * 1000:.0f} ms, one run each",
               f"mean {summary.mean:.2f}×, median {summary.median:.2f}×, worst {summary.worst.ratio:.2f}× on "
               f"{summary.worst.name} ({summary.worst.slow_stage()}); all PRs {summary.aggregate:.2f}×",
               TARGETS,
               summary.mean <= MEAN_TARGET and summary.worst.ratio <= WORST_TARGET)
    head["details"] = "The worst three PRs' timelines (seconds from the start of the run; LLM rounds " \
        "from the server's log, tools from spans recorded where they ran):\n\n" + \
        "\n\n".join(timeline.render(t) for t in worst3)
    rows = [head]
    for lang in langs:
        of = [t for t in counted if languages[t.name] == lang]
        s = timeline.summarise(of)
        if s is not None:
            rows.append(row(f"E2E wide set, {lang} PRs (informational)",
                            f"{len(of)} PRs: mean {s.mean:.2f}×, median {s.median:.2f}×, worst "
                            f"{s.worst.ratio:.2f}× on {s.worst.name}"))
    firsts = sorted(t.first_request for t in counted if t.first_request is not None)
    if firsts:
        rows.append(row("E2E wide set: first LLM request after the run's start (informational)",
                        f"median {firsts[len(firsts) // 2] * 1000:.0f} ms, max {firsts[-1] * 1000:.0f} ms"))
    errs = [f"{r.pr.name}/{rep.name}: {rep.error}" for r, _ in results for rep in r.whole.reports if rep.error]
    if errs:
        rows.append(row("E2E wide set analyzer errors", "; ".join(errs)[:300], "none", False))
    return rows


def harness_rows(worst: Sequence[PR], rounds: int = 2) -> list[Row]:
    """The worst PRs again, alternately against the latency server in this process (the old
    harness: its per-request work took the interpreter lock from the pipeline) and in a process
    of its own (as measured above): how much of the old worst was the harness."""
    runs: dict[str, list[timeline.Timeline]] = {"in": [], "own": []}
    for i in range(rounds):
        for where in ("in", "own") if i % 2 == 0 else ("own", "in"):
            of = latency_server if where == "in" else LLMProcess
            runs[where] += [t for _, t in measure(worst, server_of=of) if t.floor_s]
    if not runs["in"] or not runs["own"]:
        return []
    inside, own = (statistics.fmean(t.ratio for t in runs[w]) for w in ("in", "own"))
    added = statistics.fmean(t.wall for t in runs["in"]) - statistics.fmean(t.wall for t in runs["own"])
    return [row(f"E2E wide set, the worst {len(worst)} PRs again ×{rounds}: LLM server in the bench's process "
                "(the old harness) / in a process of its own (informational: what the harness cost)",
                f"{inside:.2f}× / {own:.2f}× of the floor: the harness added {inside - own:+.2f}× "
                f"({added * 1000:+.0f} ms a PR)")]


def run(quick: bool = False) -> list[Row]:
    prs, missing = load()
    figure = "E2E wide set wall / floor"
    if not prs:
        return [row(figure, f"not measured: the wide set's files are missing ({len(missing)} PRs listed in "
                            "bench/data/prs/SOURCES.md; python -m bench.wide_set)", TARGETS, None)]
    chosen = prs[:QUICK_PRS] if quick else prs
    languages = {pr.name: lang for pr, lang in chosen}
    repos = len({pr.name.rsplit("-", 1)[0] for pr, _ in chosen})
    warm_up()
    measure([chosen[0][0]])  # not counted: a process's first PR starts its threads, clients, connections
    results = measure([pr for pr, _ in chosen])
    rows = rows_from(results, languages, repos)
    worst = [r.pr for r, t in sorted(results, key=lambda x: -x[1].ratio if x[1].floor_s else 0.0)[:3]]
    rows += harness_rows(worst[:1] if quick else worst, rounds=1 if quick else 2)
    if missing:
        rows.append(row("E2E wide set: listed PRs not built (informational)", f"{len(missing)}"))
    return rows
