"""What a hunk's round trip can say about the change, and what it cannot (docs/reports.md).

A round trip tests two things at once: whether the descriptions carry the edit, and whether the
model can edit code at all. Only the first is about the change. The baseline separates them:
from the uninformative description "Edit." a model that can do the task gives the code back with
its unchanged lines (the hunk's context lines, which every correct edit keeps) — it cannot guess
the edit, so its baseline RTC is usually 0, and that says nothing. A model that, given "Edit.",
does not even give back most of the unchanged lines has **failed the hunk's own baseline**: its
failure to re-create the edit from a description is its own, not the change's (a hunk it did
re-create from a description stays scored: that evidence holds). Precisely:

    kept(h)  = share of h's context lines (whitespace-normalised, blank lines left out) that
               appear as a line of the baseline's regenerated code
    failed   = h has context lines and kept(h) < BASELINE_KEPT

A hunk is **inconclusive** (analyzers/report.py `Inconclusive`) when its model failed its
baseline (BASELINE), when no description re-created any hunk of a run of two or more (EVERY_ITEM:
the model, not each change, is what the run measured), or when the model is the embedded one
(EMBEDDED: 135M parameters only show the pipeline working), or when the repository's
qualification record does not qualify the model that ran (UNQUALIFIED: bot/core/qualification.py;
the analysis context's `unqualified`). The first reason found is kept, in the order EMBEDDED,
UNQUALIFIED, BASELINE, EVERY_ITEM. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzers.code.diff import Hunk
from analyzers.report import Finding, Inconclusive
from analyzers.rtc.round_trip import RoundTrip

BASELINE_KEPT = 0.5  # the share of the unchanged lines the baseline must give back
MISSED_SHOWN = 3  # added lines named in the advice


def _lines(code: str) -> list[str]:
    return [" ".join(ln.split()) for ln in code.splitlines() if ln.strip()]


def kept(hunk: Hunk, regenerated: str) -> float | None:
    """The share of `hunk`'s context lines found as lines of `regenerated` (None: no context)."""
    context = _lines("\n".join(ln.text for ln in hunk.lines if ln.kind == " "))
    if not context:
        return None
    have = set(_lines(regenerated))
    return sum(ln in have for ln in context) / len(context)


def failed_baseline(hunk: Hunk, trip: RoundTrip) -> bool:
    """Whether the model failed the hunk's own baseline (the module's definition)."""
    share = kept(hunk, trip.baseline[0] if trip.baseline else "")
    return share is not None and share < BASELINE_KEPT


def missed(hunk: Hunk, trip: RoundTrip) -> list[str]:
    """The hunk's added lines that no regeneration from a description carried (normalised, in
    order, at most MISSED_SHOWN): what the descriptions left out."""
    carried: set[str] = set()
    for row in trip.backward:
        for code in row:
            carried.update(_lines(code))
    added = _lines("\n".join(ln.text for ln in hunk.lines if ln.kind == "+"))
    return [ln for ln in dict.fromkeys(added) if ln not in carried][:MISSED_SHOWN]


def judge(findings: Sequence[Finding], failed: Sequence[bool], *, embedded: bool, unqualified: bool = False) -> None:
    """Mark each finding inconclusive where its evidence cannot say anything about its change:
    `failed[i]`, whether finding i's model failed its baseline; `embedded`, the embedded model;
    `unqualified`, a model the repository's qualification record does not qualify."""
    none_made = len(findings) > 1 and all(f.scores.get("rtc", 0.0) == 0 for f in findings)
    for f, base in zip(findings, failed, strict=True):
        if embedded:
            f.inconclusive = Inconclusive.EMBEDDED
        elif unqualified:
            f.inconclusive = Inconclusive.UNQUALIFIED
        elif base and f.scores.get("rtc", 0.0) == 0:  # a re-created edit is evidence all the same
            f.inconclusive = Inconclusive.BASELINE
        elif none_made:
            f.inconclusive = Inconclusive.EVERY_ITEM
