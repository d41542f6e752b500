"""AutoFix in words and on the dashboard: its headline, and per repository its Semgrep
findings, fixes proposed and verified per week beside the suggestions published and applied."""

from __future__ import annotations

from typing import Any

from analyzers.presentation import Chart, DashboardData, Panel, Regenerations, Total, num, week
from analyzers.report import AnalyzerReport, Finding

ORDER = ("findings", "fixes proposed", "fixes verified", "suggested", "applied")
LABELS = {  # its scores' words
    "fixed": "verified by re-scan", "fix_pct": "verified by re-scan %", "rtc_pass_pct": "RTC pass %",
    "fix_pct_rtc_pass": "verified by re-scan % when RTC passes",
    "fix_pct_rtc_fail": "verified by re-scan % when RTC fails",
    "fixes_proposed": "fixes proposed", "not_vulnerable": "answered not vulnerable",
    "semgrep_findings_total": "Semgrep findings (all lines)", "no_fix": "no fix proposed",
    "no_code": "answers without code", "unparsable": "unparsable fixes", "rtc_pass": "RTC pass",
    "rtc_exact": "RTC exact", "rtc_normalised": "RTC normalised",
}
COUNTS = ("fixed", "fixes_proposed", "not_vulnerable", "semgrep_findings_total", "no_fix", "no_code", "unparsable")


def proposed(verdict: str, rtc: bool | None, refused: str = "") -> str:
    """A proposed fix in words: "fix proposed, verified by re-scan and Patched RTC". Never
    "fixed": the pull request is fixed only when its author applies the fix. `refused`: the
    check that refused it, in words."""
    if verdict != "fixed":
        why = refused or {"unparsable": "the patched file does not parse",
               "not applicable": "it could not be applied"}.get(verdict, "the re-scan still flags the lines")
        return f"fix proposed, not verified: {why}"
    return "fix proposed, verified by re-scan" + {None: "", True: " and Patched RTC",
                                                   False: ", not by Patched RTC"}[rtc]


def _findings(n: int) -> str:
    return f"{n} Semgrep finding{'s' if n != 1 else ''} on changed lines"


def headline(report: AnalyzerReport) -> str:
    """"2 fixes proposed for 3 Semgrep findings on changed lines; 1 verified by re-scan and
    Patched RTC, 1 by re-scan only". A fix is proposed, never "fixed": the pull request is
    fixed only when its author applies it."""
    s = report.scores
    if "findings" not in s:
        n = len(report.findings)
        return f"{_findings(n)}, no fix proposed" if n else "no Semgrep findings on changed lines"
    n, verified = int(round(s["findings"])), int(round(s.get("fixed", 0)))
    fixes = int(round(s.get("fixes_proposed", verified)))
    both = sum(1 for f in report.findings if f.fix is not None and f.scores.get("rtc_pass") == 1.0)
    words = f"{fixes} fix{'es' if fixes != 1 else ''} proposed for {_findings(n)}"
    if not fixes:
        return words
    words += f"; {both} verified by re-scan and Patched RTC"
    return words + (f", {verified - both} by re-scan only" if verified > both else "")


def advice(f: Finding) -> str | None:
    """What the author does with a Semgrep finding: commit a verified fix, review an unverified
    one, or fix the lines themselves."""
    if f.fix is None:
        return "Semgrep flags these lines and no fix was proposed: fix them, or dismiss the finding"
    if f.scores.get("fixed") == 1.0:
        return "commit the proposed fix (" + proposed("fixed", _rtc(f)).removeprefix("fix proposed, ") + ")"
    return "review the proposed fix before committing it: it is not verified"


def in_review(n: int, first: bool) -> str:
    """What a pull request review says of the n fixes of it that it suggests."""
    fixes = f"{n} fix{'es' if n != 1 else ''} you can commit"
    checked = "each checked by a Semgrep re-scan and Patched RTC."
    return f"rtcbot AutoFix: {fixes} from this review, {checked}" if first else f"And {fixes}, {checked}"


def fix_note(f: Finding) -> str:
    """Under a suggested fix: what checked it (a suggestion is verified when Patched RTC passed:
    AutoFix proposes no fix that the re-scan still flags)."""
    if _rtc(f):
        return ("Verified: Semgrep's re-scan of the file with this fix applied is clean, and the fix passed "
                "Patched RTC.")
    return "Not verified by Patched RTC: read it closely before you commit it."


def _rtc(f: Finding) -> bool | None:
    return None if "rtc_pass" not in f.scores else f.scores["rtc_pass"] == 1.0


def per_week(data: DashboardData) -> list[dict[str, Any]]:
    """Per week: Semgrep findings on changed lines, fixes proposed, fixes the re-scan verified
    (the check runs); suggestions published and applied (the acceptance record)."""
    counts: dict[tuple[str, str], float] = {}

    def add(w: str, what: str, n: float) -> None:
        counts[(w, what)] = counts.get((w, what), 0.0) + n

    for r in data.runs:
        for key, what in (("findings", "findings"), ("fixes_proposed", "fixes proposed"), ("fixed", "fixes verified")):
            add(week(r.updated_at), what, num(r.scores.get(key)) or 0.0)
    for s in data.suggestions:
        add(week(s.created_at), "suggested", 1)
        add(week(s.created_at), "applied", 1 if s.applied else 0)
    return [{"week": w, "what": what, "count": n} for (w, what), n in sorted(counts.items())]


def dashboard(data: DashboardData) -> Panel:
    suggested, applied = len(data.suggestions), sum(1 for s in data.suggestions if s.applied)
    return Panel(
        charts=[Chart("autofix", "AutoFix findings, fixes and acceptance per week",
                      f"AutoFix per week: Semgrep findings, fixes proposed and verified, suggestions published "
                      f"({suggested}) and applied ({applied})", "grouped-bars", per_week(data),
                      x="week", x_title="week", y="count", y_title="count", series="what", order=ORDER)],
        totals=[Total(f"{applied}/{suggested}", "AutoFix suggestions applied")])


def regenerations(f: Finding) -> Regenerations | None:
    """The code Patched RTC wrote back from the fix's description (its evidence's
    `regenerated`), for `explain`."""
    regenerated = f.evidence.get("regenerated")
    return Regenerations([regenerated]) if isinstance(regenerated, str) else None
