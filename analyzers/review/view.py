"""The Review analyzer in words: its headline and what a pull request's author does with each
of its findings (analyzers/presentation.py)."""

from __future__ import annotations

from analyzers.report import AnalyzerReport, Finding

LABELS = {"candidates": "candidates", "kept": "kept", "duplicates": "near-duplicates dropped",
          "unparsed": "unparsed answers", "similarity": "similarity", "rel": "relevance", "con": "conciseness",
          "comp": "comprehensiveness"}  # its scores' words
COUNTS = ("candidates", "kept", "duplicates", "unparsed")


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


def _s(n: int) -> str:
    return "s" if n != 1 else ""


def in_review(n: int, first: bool) -> str:
    """What a pull request review says of the n comments of it that it carries."""
    if first:
        return (f"rtcbot review: {n} comment{_s(n)}, each the best of several drafts by CRScore against the "
                "change's claims and code smells.")
    return f"And {n} review comment{_s(n)} by rtcbot, each the best of several drafts by CRScore."


def comment_note(f: Finding) -> tuple[str, list[str]]:
    """Under a posted comment: its CRScore figures ("rtcbot review · CRScore Rel 0.50, Con 0.61,
    Comp 0.42"), and the claims it matched (a model wrote them: the reporter quotes them inert)."""
    figures = ", ".join(f"{k.capitalize()} {f.scores[k]:.2f}" for k in ("rel", "con", "comp") if k in f.scores)
    matched = [str(m.get("pseudo_ref", "")) for m in f.evidence.get("matched", []) if isinstance(m, dict)]
    return (f"rtcbot review · CRScore {figures}" if figures else "rtcbot review"), matched
