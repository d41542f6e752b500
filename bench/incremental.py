"""Incremental cost: requests of a push that changes one hunk / requests of the first run.

A synthetic pull request changes 30 functions of one Python file (30 hunks), with one review
comment per hunk (so CRScore asks for claims on each). The first run of every analyzer, with
a fresh LLM cache, pays for all 30 hunks. Then a push changes one of those hunks again; the
second run (a new LLM client on the same cache, as a new worker job would be) should pay only
for that hunk: ratio = 1/30 of the first run. Two pushes are measured: one that keeps the
line count (later hunks stay where they were) and one that adds a line (every later hunk
moves down by one; the cache keys should not depend on positions). Requests are counted by
the loopback server; no latency is injected (this is a cost figure, not a speed figure).
"""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Sequence
from pathlib import Path

from analyzers import pipeline
from analyzers.code.diff import ChangeSet, parse_diff
from analyzers.context import AnalysisContext, ReviewComment
from bench import Row, bench_responder, row
from bench.e2e_floor import ANALYZERS, client
from tests.fakes.llm_server import ScriptedLLM

PATH = "pkg/calc.py"


def function(i: int, version: int, extra_line: bool = False) -> list[str]:
    body = [
        f"def compute_{i}(values):",
        f'    """Combine the values for case {i}."""',
        "    total = 0",
        "    for v in values:",
        f"        total += v * {i + 1}" if version == 0 else f"        total += v * {i + 1} + {version}",
        "    return total",
    ]
    if extra_line:
        body.insert(5, f"    total -= {version}")
    return [*body, "", ""]


def source(hunks: int, versions: Sequence[int], extra_at: int | None = None) -> str:
    lines: list[str] = ["import math", "", ""]
    for i in range(hunks):
        lines += function(i, versions[i], extra_line=(i == extra_at))
    return "\n".join(lines) + "\n"


def make_diff(old: str, new: str, path: str = PATH) -> str:
    body = "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}", n=3))
    return f"diff --git a/{path} b/{path}\n{body}"


def comments_for(changes: ChangeSet) -> list[ReviewComment]:
    return [ReviewComment(fc.path, h.added_lines[0], f"Please explain why case {k} changes its weight.",
                          author="reviewer", id=k)
            for k, (fc, h) in enumerate(changes.hunks()) if h.added_lines]


def requests_for(diff: str, server: ScriptedLLM, cache: Path, names: Sequence[str]) -> tuple[int, int]:
    """(server requests, hunks) of one pipeline run over `diff` with the given cache file."""
    changes = parse_diff(diff)
    ctx = AnalysisContext(llm_factory=lambda: client(server, cache_path=cache),
                          comments=comments_for(changes))
    server.reset()
    reports = pipeline.run_all(list(names), changes, ctx)
    errors = [f"{r.name}: {r.error}" for r in reports if r.error]
    if errors:
        raise RuntimeError("; ".join(errors))
    return server.request_count, sum(1 for _ in changes.hunks())


def measure(hunks: int = 30, names: Sequence[str] = ANALYZERS, changed: int | None = None) -> dict[str, int]:
    changed = hunks // 2 if changed is None else changed
    base = source(hunks, [0] * hunks)
    first = source(hunks, [1] * hunks)
    again = [1] * hunks
    again[changed] = 2
    push_same = source(hunks, again)
    push_longer = source(hunks, again, extra_at=changed)
    out: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="rtcbot-bench-incr-") as tmp, ScriptedLLM(bench_responder) as server:
        cache = Path(tmp) / "cache.sqlite3"
        out["first"], out["hunks"] = requests_for(make_diff(base, first), server, cache, names)
        out["rerun"], _ = requests_for(make_diff(base, first), server, cache, names)
        out["push_same_lines"], _ = requests_for(make_diff(base, push_same), server, cache, names)
        out["push_shifting"], _ = requests_for(make_diff(base, push_longer), server, cache, names)
        # the changed hunk's own price: that one hunk alone, on an empty cache
        alone = make_diff(source(1, [0]), source(1, [2]))
        out["one_hunk"], _ = requests_for(alone, server, Path(tmp) / "alone.sqlite3", names)
    return out


def run(quick: bool = False) -> list[Row]:
    m = measure(hunks=6 if quick else 30)
    n, first, one = m["hunks"], m["first"], m["one_hunk"]
    target = f"≤ {one}/{first} (the changed hunk's requests only, 1/{n})"
    rows = [
        row(f"Incremental: requests after a push changing 1 of {n} hunks / first run",
            f"{m['push_same_lines']}/{first} = {m['push_same_lines'] / first:.3f}", target,
            m["push_same_lines"] <= one),
        row(f"Incremental: same, the push also shifts the {n - n // 2 - 1} later hunks by one line",
            f"{m['push_shifting']}/{first} = {m['push_shifting'] / first:.3f}", target,
            m["push_shifting"] <= one),
        row("Incremental: re-run of the same head / first run", f"{m['rerun']}/{first}", "0", m["rerun"] == 0),
        row("Incremental: first-run requests per hunk (all analyzers, 1 comment per hunk; informational)",
            f"{first / n:.2f}"),
    ]
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
