"""CRScore in words and on the dashboard: its headline, and per repository the distribution of
each scored review comment's Rel, Con and Comp per week."""

from __future__ import annotations

from typing import Any

from analyzers.presentation import Chart, DashboardData, Panel, num, week
from analyzers.report import AnalyzerReport, Finding

METRICS = ("rel", "con", "comp")
LABELS = {"rel": "relevance", "con": "conciseness", "comp": "comprehensiveness", "similarity": "similarity",
          "best_similarity": "best similarity"}  # its scores' words
OWN_COMMENT = "written by rtcbot: its own comments are not scored"  # a Skipped item's reason


def headline(report: AnalyzerReport) -> str | None:
    """"relevance 0.50, conciseness 0.61, comprehensiveness 0.42 over 3 review comments; 2
    comments by rtcbot not scored"; "no review comments scored" when there is none."""
    s = report.scores
    own = sum(1 for k in report.skipped if k.reason == OWN_COMMENT)
    apart = f"; {own} comment{'s' if own != 1 else ''} by rtcbot not scored" if own else ""
    if "rel" not in s:
        return None if report.findings else "no review comments scored" + apart  # None: the generic words

    def v(key: str) -> str:
        return "–" if s.get(key) is None else f"{s[key]:.2f}"

    n = len(report.findings)
    return (f"relevance {v('rel')}, conciseness {v('con')}, comprehensiveness {v('comp')} "
            f"over {n} review comment{'s' if n != 1 else ''}{apart}")


LOW = 0.13  # a comment whose relevance is under this rates low (the Review analyzer's default min_rel)


def advice(f: Finding) -> str | None:
    """Why a review comment rates low (None: it does not): it says little of what the change
    does (comprehensiveness), or much that is not about it (conciseness)."""
    rel = f.scores.get("rel")
    if rel is None or rel >= LOW:
        return None
    con, comp = f.scores.get("con", 0.0), f.scores.get("comp", 0.0)
    why = ("most of its sentences match nothing the change does" if con <= comp
           else "it leaves most of what the change does unsaid")
    return f"rates low (relevance {rel:.2f}): {why}"


def per_comment(data: DashboardData) -> list[dict[str, Any]]:
    """Each scored review comment's Rel, Con and Comp, by the week of its check run."""
    by_id = {r.id: r for r in data.runs}
    out = []
    for it in data.items:
        run = by_id.get(it.run_id)
        if run is None:
            continue
        for metric in METRICS:
            v = num(it.scores.get(metric))
            if v is not None:
                out.append({"week": week(run.updated_at), "metric": metric.capitalize(), "value": v})
    return sorted(out, key=lambda r: (r["week"], r["metric"]))


def dashboard(data: DashboardData) -> Panel:
    rows = per_comment(data)
    return Panel(charts=[Chart(
        "crscore", "CRScore of review comments per week",
        f"Distributions of CRScore Rel, Con and Comp of review comments per week ({len(rows) // 3} comments)",
        "boxes", rows, x="week", x_title="week", y="value", y_title="score per review comment",
        series="metric", order=("Rel", "Con", "Comp"), y_domain=(0.0, 1.0))])
