"""bot/core/gate.py, pure: gates fail closed over what an analyzer could not analyse.

A changed file an analyzer could not analyse (a Skipped item of kind "failed") is the metric
`<analyzer>.unscanned`, and a gate that reads the analyzer's findings or scores cannot pass
while it is above 0 (or while the analyzer could not run); what was skipped by policy (an
ignore glob, a binary file) never blocks a gate.
"""

from __future__ import annotations

from analyzers.report import GATE_CANNOT_PASS as CANNOT_PASS
from analyzers.report import AnalyzerReport, Finding, Skipped
from bot.core.gate import SHOWN_ITEMS, judge, metrics_of, parse_fail_on

BIG = Skipped("big.py", "over Semgrep's size limit: target file size exceeds 200 bytes")
LOCK = Skipped("package-lock.json", "ignored by glob 'package-lock.json'", "policy")


def autofix(*skipped: Skipped, findings: int = 0, error: str | None = None) -> AnalyzerReport:
    return AnalyzerReport("autofix", "AutoFix", skipped=list(skipped), error=error,
                          findings=[Finding("autofix", "r", path="a.py", start_line=i + 1)
                                    for i in range(findings)])


def editing(rtc: float = 0.9) -> AnalyzerReport:
    return AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc": rtc},
                          findings=[Finding("editing_rtc", "h", path="a.py", start_line=1)])


def test_unscanned_counts_only_what_could_not_be_analysed() -> None:
    m = metrics_of([autofix(BIG, LOCK), editing()])
    assert m["autofix"]["unscanned"] == 1 and m["autofix"]["skipped"] == 2
    assert m["editing_rtc"]["unscanned"] == 0 and m["total"]["unscanned"] == 1


def test_a_findings_gate_cannot_pass_over_an_unscanned_file() -> None:
    v = judge(parse_fail_on("autofix.findings>0"), [autofix(BIG)])
    assert v.matched == () and v.fails and v.conclusion == "failure"
    assert v.conclusion_of("autofix") == "failure"
    assert v.crossed("autofix") == [
        "The gate cannot pass: AutoFix could not scan 1 changed file: big.py "
        "(over Semgrep's size limit: target file size exceeds 200 bytes)"]


def test_policy_skips_never_block_a_gate() -> None:
    v = judge(parse_fail_on("autofix.findings>0"), [autofix(LOCK, Skipped("logo.png", "binary file", "policy"))])
    assert not v.fails and v.conclusion == "success" and v.blocked == {}
    assert v.conclusion_of("autofix") == "neutral" and v.crossed("autofix") == []


def test_only_the_analyzers_a_gate_reads_are_held_to_it() -> None:
    reports = [autofix(BIG), editing(rtc=0.9)]
    v = judge(parse_fail_on("editing_rtc.rtc<0.2"), reports)
    assert not v.fails and v.conclusion_of("autofix") == "neutral"
    # `total` reads every analyzer; each blocked analyzer's own check run says so
    t = judge(parse_fail_on("total.findings>5"), reports)
    assert t.fails and set(t.blocked) == {"autofix"}
    assert t.conclusion_of("autofix") == "failure" and t.conclusion_of("editing_rtc") == "neutral"
    # a gate on coverage itself is the admins' own measure of it, read as written
    assert not judge(parse_fail_on("autofix.unscanned>3"), reports).fails
    held = judge(parse_fail_on("autofix.unscanned>0"), reports)
    assert held.matched == ("autofix.unscanned>0",) and held.blocked == {}


def test_the_blocked_reason_comes_first_beside_an_alternative_that_holds() -> None:
    v = judge(parse_fail_on("autofix.findings>0"), [autofix(BIG, findings=2)])
    crossed = v.crossed("autofix")
    assert len(crossed) == 2 and crossed[0].startswith(CANNOT_PASS) and crossed[1].startswith("autofix.findings>0")


def test_an_analyzer_that_could_not_run_blocks_a_gate_on_it() -> None:
    v = judge(parse_fail_on("autofix.findings>0"), [autofix(error="semgrep failed (exit 2): boom")])
    assert v.fails and v.blocked == {"autofix": f"{CANNOT_PASS}AutoFix could not run: semgrep failed (exit 2): boom"}


def test_thresholds_fail_closed_too_with_the_analyzers_own_words() -> None:
    from bot.core.gate import from_thresholds

    cut = Skipped("a.py @@ -1 +1 @@", "not scored: request budget of 3 spent")
    report = AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc": 0.9}, skipped=[cut])
    v = judge(from_thresholds({"editing_rtc": {"rtc": 0.5}}), [report])
    assert v.matched == () and v.crossed("editing_rtc") == [
        f"{CANNOT_PASS}EditingRTC could not analyse 1 item: a.py @@ -1 +1 @@ (not scored: request budget of 3 spent)"]


def test_a_long_list_is_cut_with_a_count() -> None:
    many = [Skipped(f"f{i}.py", "over Semgrep's size limit") for i in range(SHOWN_ITEMS + 3)]
    (why,) = judge(parse_fail_on("autofix.findings>0"), [autofix(*many)]).blocked.values()
    assert f"could not scan {SHOWN_ITEMS + 3} changed files: f0.py" in why and why.endswith(", and 3 more")
    assert f"f{SHOWN_ITEMS}.py" not in why


def test_skipped_kind_is_stored_and_old_reports_read_back_as_policy() -> None:
    report = autofix(BIG, LOCK)
    again = AnalyzerReport.from_dict(report.to_dict())
    assert [s.kind for s in again.skipped] == ["failed", "policy"] and again == report
    old = {"name": "autofix", "title": "AutoFix", "skipped": [{"item": "big.py", "reason": "too big"}]}
    assert AnalyzerReport.from_dict(old).skipped == [Skipped("big.py", "too big", "policy")]
    odd = {"name": "autofix", "title": "AutoFix", "skipped": [{"item": "x", "reason": "y", "kind": "later"}]}
    assert AnalyzerReport.from_dict(odd).skipped[0].kind == "failed"  # an unknown kind fails closed


def test_a_reason_the_gate_cannot_pass_is_told_by_its_type_not_its_first_words() -> None:
    """The check run says a CannotPass in its own words and an alternative that holds as a
    threshold crossed, whatever either's text starts with."""
    from analyzers.report import CannotPass
    from reporters.check_run import summary_of

    report = AnalyzerReport("autofix", "AutoFix")
    said = summary_of(report, [CannotPass("AutoFix could not run: boom"), f"{CANNOT_PASS}x (words of a threshold)"])
    assert "**The gate cannot pass:** AutoFix could not run: boom" in said
    assert f"**Threshold crossed:** {CANNOT_PASS}x (words of a threshold)" in said
