"""Per-PR timelines of the E2E benchmark and the summary over a set of PRs (pure functions).

A timeline is built from what was recorded while the PR ran, never estimated: the LLM
server's log (each request's arrival and answer, `ScriptedLLM.served`) grouped into rounds
by what the request asks (EditingRTC forward / backward, CRScore claims, AutoFix fix /
description / regeneration), and the spans of the local tools (`analyzers.spans`: every
tool started through `analyzers.tools.programs.run` — Semgrep, pylint, JSHint, PMD's CLI — and each
language's smell detectors, PMD's server included).

The stage that made a PR slow: the wall beyond its floor is time in which no LLM request is
in flight (before the first request, between rounds, after the last answer) or LLM rounds
that together take longer than the floor. The largest of those is named, with the local
tool that ran most during it.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analyzers.spans import Span
from bench import system_text
from tests.fakes.llm_server import last_user_text

BAR = 40  # characters of a timeline's bar
SMELL_TOOLS = {"python": "pylint, radon", "java": "PMD", "javascript": "JSHint"}


def llm_round(request: Mapping[str, Any]) -> str:
    """Which round of which analyzer a chat request belongs to (bench_responder's cases)."""
    system, user = system_text(dict(request)), last_user_text(dict(request))
    if system.startswith("Task: fix a security finding"):
        return "AutoFix fix"
    if system.startswith("Task: describe a code change"):
        return "AutoFix description"
    if system.startswith("Task: apply an instruction"):
        return "AutoFix regeneration"
    if "Summary of changes" in user:
        return "CRScore claims"
    if "[edit description]" in user:
        return "EditingRTC backward"
    if "[new]" in user:
        return "EditingRTC forward"
    return "LLM other"


@dataclass(frozen=True)
class Entry:
    stage: str
    start: float  # seconds from the start of the PR's run
    end: float
    count: int = 1  # requests (LLM rounds) or runs merged into the entry


@dataclass
class Timeline:
    name: str
    wall: float
    floor_s: float  # the PR's sequential LLM floor in seconds (0: it made no request)
    llm: list[tuple[float, float]] = field(default_factory=list)  # each request, from the start
    entries: list[Entry] = field(default_factory=list)  # rounds and tools, by start

    @property
    def ratio(self) -> float:
        return self.wall / self.floor_s if self.floor_s else float("nan")

    @property
    def first_request(self) -> float | None:
        return min((a for a, _ in self.llm), default=None)

    def idle(self) -> list[tuple[str, float, float]]:
        """The stretches with no LLM request in flight: (where, start, end), in order."""
        if not self.llm:
            return [("no LLM request", 0.0, self.wall)] if self.wall > 0 else []
        out: list[tuple[str, float, float]] = []
        at, first = 0.0, True
        for a, b in sorted(self.llm):
            if a > at:
                out.append(("before the first request" if first else "between LLM rounds", at, a))
            at, first = max(at, b), False
        if self.wall > at:
            out.append(("after the last answer", at, self.wall))
        return out

    def slow_stage(self) -> str:
        """The largest part of the wall beyond the floor, in words (see the module's doc)."""
        idle = self.idle()
        idle_total = sum(b - a for _, a, b in idle)
        stretch = (self.wall - idle_total) - self.floor_s
        where, a, b = max(idle, key=lambda x: x[2] - x[1], default=("", 0.0, 0.0))
        if stretch >= b - a:
            return f"LLM rounds {stretch:.2f} s longer than the floor"
        tools = [(overlap(e, a, b), e.stage) for e in self.entries if not e.stage.startswith(LLM_STAGES)]
        busiest = max(tools, default=(0.0, ""))
        during = f"; {busiest[1]} ran {busiest[0]:.2f} s of it" if busiest[0] > 0 else "; no local tool ran"
        return f"{where} {b - a:.2f} s{during}"


LLM_STAGES = ("EditingRTC", "CRScore", "AutoFix", "LLM")


def overlap(e: Entry, a: float, b: float) -> float:
    return max(0.0, min(e.end, b) - max(e.start, a))


def build(name: str, t0: float, wall: float, floor_s: float, requests: Sequence[Mapping[str, Any]],
          served: Sequence[tuple[int, float, float]], spans: Sequence[Span]) -> Timeline:
    """The PR's timeline from the server's log and the recorded spans; times from `t0`."""
    llm = sorted((a - t0, b - t0) for _, a, b in served)
    rounds: dict[str, list[tuple[float, float]]] = {}
    for index, a, b in served:
        rounds.setdefault(llm_round(requests[index]), []).append((a - t0, b - t0))
    entries = [Entry(stage, min(a for a, _ in times), max(b for _, b in times), len(times))
               for stage, times in rounds.items()]
    for s in spans:
        stage = s.stage
        if stage.startswith("smells "):
            lang = stage.removeprefix("smells ")
            stage = f"smells {lang} ({SMELL_TOOLS.get(lang, 'detectors')})"
        entries.append(Entry(stage, s.start - t0, s.end - t0))
    entries.sort(key=lambda e: (e.start, e.end))
    return Timeline(name, wall, floor_s, llm, entries)


@dataclass(frozen=True)
class Summary:
    mean: float
    median: float
    worst: Timeline
    aggregate: float  # total wall / total floor


def summarise(timelines: Sequence[Timeline]) -> Summary | None:
    """Mean, median and worst of the per-PR ratios (PRs that made an LLM request only)."""
    counted = [t for t in timelines if t.floor_s]
    if not counted:
        return None
    ratios = [t.ratio for t in counted]
    return Summary(statistics.fmean(ratios), statistics.median(ratios), max(counted, key=lambda t: t.ratio),
                   sum(t.wall for t in counted) / sum(t.floor_s for t in counted))


def worst(timelines: Sequence[Timeline], k: int = 3) -> list[Timeline]:
    return sorted((t for t in timelines if t.floor_s), key=lambda t: t.ratio, reverse=True)[:k]


def render(t: Timeline) -> str:
    """The timeline as a fenced text block: one line per stage, with a bar over the wall."""
    first = t.first_request
    lines = [f"{t.name}: wall {t.wall:.2f} s, floor {t.floor_s:.2f} s, {t.ratio:.2f}×; "
             f"first request at {first:.3f} s" if first is not None else
             f"{t.name}: wall {t.wall:.2f} s, no LLM request",
             f"slowest part beyond the floor: {t.slow_stage()}",
             f"{'start':>7} {'end':>7}  {'stage':<44} bar (0 … {t.wall:.2f} s)"]
    for e in t.entries:
        stage = e.stage + (f" ×{e.count}" if e.count > 1 else "")
        lines.append(f"{e.start:7.3f} {e.end:7.3f}  {stage:<44} {bar(e.start, e.end, t.wall)}")
    lines.append(f"{t.wall:7.3f} {'':>7}  {'all analyzers done':<44}")
    return "```text\n" + "\n".join(lines) + "\n```"


def bar(start: float, end: float, wall: float, width: int = BAR) -> str:
    if wall <= 0:
        return ""
    a = min(width, max(0, round(start / wall * width)))
    b = min(width, max(a + 1, round(end / wall * width)))
    return "|" + "." * a + "#" * (b - a) + "." * (width - b) + "|"
