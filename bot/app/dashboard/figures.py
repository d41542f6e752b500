"""The dashboard's figures: plain rows from the store in, plain numbers out (pure; no Flask,
no database, no charts). bot/app/dashboard/data.py reads the rows; charts.py draws these figures.

Weeks are ISO weeks (UTC), labelled by their Monday ("2026-11-23"). A pull request counts once
per check: the check run of its newest head."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any
from urllib.parse import quote

EDITING_RTC = "rtcbot / EditingRTC"
CRSCORE = "rtcbot / CRScore"
AUTOFIX = "rtcbot / AutoFix"
CRSCORE_METRICS = ("rel", "con", "comp")
LOWEST = 10  # rows in each "lowest scores" table


@dataclass(frozen=True)
class Run:
    """A completed check run (the store's check_runs row, as plain data)."""

    id: int
    name: str
    head_sha: str
    pr_number: int | None
    scores: Mapping[str, Any]
    github_id: int | None
    updated_at: float
    conclusion: str | None = None


@dataclass(frozen=True)
class Item:
    """A finding of a check run (a hunk, a review comment, a Semgrep finding)."""

    run_id: int
    path: str | None
    start_line: int | None
    end_line: int | None
    scores: Mapping[str, Any]
    title: str = ""


@dataclass(frozen=True)
class Job:
    pr_number: int | None
    llm_requests: int
    llm_tokens: int
    created_at: float


@dataclass(frozen=True)
class Suggestion:
    """Something published that a person can apply (the `published` table)."""

    analyzer: str
    created_at: float
    applied: bool


@dataclass
class Figures:
    repo: str
    rtc_per_pr: list[dict[str, Any]] = field(default_factory=list)  # pr, week, rtc, lift
    rtc_per_week: list[dict[str, Any]] = field(default_factory=list)  # week, metric, value, prs
    crscore: list[dict[str, Any]] = field(default_factory=list)  # week, metric, value (per comment)
    autofix: list[dict[str, Any]] = field(default_factory=list)  # week, what, count
    llm: list[dict[str, Any]] = field(default_factory=list)  # week, requests, tokens
    lowest_prs: list[dict[str, Any]] = field(default_factory=list)
    lowest_hunks: list[dict[str, Any]] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.rtc_per_pr or self.crscore or self.autofix or self.llm)


def week(at: float) -> str:
    """The Monday (UTC) of the ISO week of `at`, as YYYY-MM-DD."""
    t = time.gmtime(at)
    monday = at - t.tm_wday * 86400
    return time.strftime("%Y-%m-%d", time.gmtime(monday))


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def latest_per_pr(runs: Iterable[Run], name: str) -> list[Run]:
    """Of the check runs called `name`, each pull request's newest, by PR number."""
    best: dict[int, Run] = {}
    for r in runs:
        if r.name != name or r.pr_number is None:
            continue
        if r.pr_number not in best or r.updated_at > best[r.pr_number].updated_at:
            best[r.pr_number] = r
    return [best[k] for k in sorted(best)]


def rtc_per_pr(runs: Sequence[Run]) -> list[dict[str, Any]]:
    out = []
    for r in latest_per_pr(runs, EDITING_RTC):
        rtc, lift = _num(r.scores.get("rtc")), _num(r.scores.get("lift"))
        if rtc is None:
            continue
        out.append({"pr": r.pr_number, "week": week(r.updated_at), "rtc": rtc,
                    "lift": lift if lift is not None else 0.0})
    return out


def rtc_per_week(per_pr: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Mean RTC and lift over each week's pull requests (long form: one row per metric)."""
    weeks: dict[str, list[Mapping[str, Any]]] = {}
    for row in per_pr:
        weeks.setdefault(row["week"], []).append(row)
    out = []
    for w in sorted(weeks):
        rows = weeks[w]
        for metric in ("rtc", "lift"):
            out.append({"week": w, "metric": metric, "value": round(fmean(r[metric] for r in rows), 4),
                        "prs": len(rows)})
    return out


def crscore(runs: Sequence[Run], items: Sequence[Item]) -> list[dict[str, Any]]:
    """Each scored review comment's Rel, Con and Comp, by the week of its check run."""
    by_id = {r.id: r for r in latest_per_pr(runs, CRSCORE)}
    out = []
    for it in items:
        run = by_id.get(it.run_id)
        if run is None:
            continue
        for metric in CRSCORE_METRICS:
            v = _num(it.scores.get(metric))
            if v is not None:
                out.append({"week": week(run.updated_at), "metric": metric.capitalize(), "value": v})
    return sorted(out, key=lambda r: (r["week"], r["metric"]))


def autofix(runs: Sequence[Run], suggestions: Sequence[Suggestion]) -> list[dict[str, Any]]:
    """Per week: Semgrep findings on changed lines, fixes proposed, fixes the re-scan verified
    (AutoFix check runs); suggestions published and applied (the acceptance record)."""
    counts: dict[tuple[str, str], float] = {}

    def add(w: str, what: str, n: float) -> None:
        counts[(w, what)] = counts.get((w, what), 0.0) + n

    for r in latest_per_pr(runs, AUTOFIX):
        w = week(r.updated_at)
        for key, what in (("findings", "findings"), ("fixes_proposed", "fixes proposed"), ("fixed", "fixes verified")):
            add(w, what, _num(r.scores.get(key)) or 0.0)
    for s in suggestions:
        if s.analyzer != "autofix":
            continue
        w = week(s.created_at)
        add(w, "suggested", 1)
        add(w, "applied", 1 if s.applied else 0)
    return [{"week": w, "what": what, "count": n} for (w, what), n in sorted(counts.items())]


def llm(jobs: Sequence[Job]) -> list[dict[str, Any]]:
    weeks: dict[str, list[int]] = {}
    for j in jobs:
        acc = weeks.setdefault(week(j.created_at), [0, 0])
        acc[0] += j.llm_requests
        acc[1] += j.llm_tokens
    return [{"week": w, "requests": r, "tokens": t} for w, (r, t) in sorted(weeks.items())]


def run_url(github_url: str, repo: str, github_id: int | None) -> str | None:
    return f"{github_url.rstrip('/')}/{repo}/runs/{github_id}" if github_id else None


def line_url(github_url: str, repo: str, head_sha: str, path: str | None, start: int | None,
             end: int | None) -> str | None:
    if not path:
        return None
    anchor = f"#L{start}" + (f"-L{end}" if end and start and end != start else "") if start else ""
    return f"{github_url.rstrip('/')}/{repo}/blob/{quote(head_sha, safe='')}/{quote(path)}{anchor}"


def lowest_prs(repo: str, runs: Sequence[Run], github_url: str, n: int = LOWEST) -> list[dict[str, Any]]:
    rows = [r for r in latest_per_pr(runs, EDITING_RTC) if _num(r.scores.get("rtc")) is not None]
    rows.sort(key=lambda r: (float(r.scores["rtc"]), r.pr_number or 0))
    return [{"pr": r.pr_number, "rtc": float(r.scores["rtc"]), "lift": _num(r.scores.get("lift")),
             "hunks": int(_num(r.scores.get("hunks")) or 0), "conclusion": r.conclusion,
             "url": run_url(github_url, repo, r.github_id)} for r in rows[:n]]


def lowest_hunks(repo: str, runs: Sequence[Run], items: Sequence[Item], github_url: str,
                 n: int = LOWEST) -> list[dict[str, Any]]:
    by_id = {r.id: r for r in latest_per_pr(runs, EDITING_RTC)}
    scored = [(it, by_id[it.run_id]) for it in items
              if it.run_id in by_id and _num(it.scores.get("rtc")) is not None]
    scored.sort(key=lambda p: (float(p[0].scores["rtc"]), p[1].pr_number or 0, p[0].path or "", p[0].start_line or 0))
    return [{"pr": run.pr_number, "path": it.path, "start_line": it.start_line, "end_line": it.end_line,
             "rtc": float(it.scores["rtc"]), "lift": _num(it.scores.get("lift")), "title": it.title,
             "run_url": run_url(github_url, repo, run.github_id),
             "line_url": line_url(github_url, repo, run.head_sha, it.path, it.start_line, it.end_line)}
            for it, run in scored[:n]]


def figures(repo: str, runs: Sequence[Run], items: Sequence[Item], jobs: Sequence[Job],
            suggestions: Sequence[Suggestion], github_url: str) -> Figures:
    """Every figure of one repository's page."""
    per_pr = rtc_per_pr(runs)
    auto = [s for s in suggestions if s.analyzer == "autofix"]
    return Figures(
        repo=repo,
        rtc_per_pr=per_pr,
        rtc_per_week=rtc_per_week(per_pr),
        crscore=crscore(runs, items),
        autofix=autofix(runs, suggestions),
        llm=llm(jobs),
        lowest_prs=lowest_prs(repo, runs, github_url),
        lowest_hunks=lowest_hunks(repo, runs, items, github_url),
        totals={
            "prs": len({r.pr_number for r in runs if r.pr_number is not None}),
            "mean_rtc": round(fmean(r["rtc"] for r in per_pr), 3) if per_pr else None,
            "mean_lift": round(fmean(r["lift"] for r in per_pr), 3) if per_pr else None,
            "llm_requests": sum(j.llm_requests for j in jobs),
            "llm_tokens": sum(j.llm_tokens for j in jobs),
            "suggested": len(auto),
            "applied": sum(1 for s in auto if s.applied),
        },
    )
