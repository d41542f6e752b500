"""The Review analyzer in words: its headline and what a pull request's author does with each
of its findings (analyzers/presentation.py)."""

from __future__ import annotations

from analyzers.report import AnalyzerReport, Finding


def _n(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def headline(report: AnalyzerReport) -> str | None:
    """"2 review comments worth posting, from 9 drafted on 3 hunks"; "no review comment worth
    posting among 9 drafted on 3 hunks"."""
    s = report.scores
    if "candidates" not in s:
        return None
    drafted, hunks = int(round(s["candidates"])), int(round(s.get("hunks", 0)))
    on = f"{drafted} drafted on {_n(hunks, 'hunk', 'hunks')}"
    kept = len(report.findings)
    if not kept:
        return f"no review comment worth posting among {on}"
    return f"{_n(kept, 'review comment', 'review comments')} worth posting, from {on}"


def advice(f: Finding) -> str | None:
    """Every comment it kept is one to read: it is a review comment on the change."""
    return "a review comment to consider"
