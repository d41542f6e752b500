"""Reports that read right: counts say what they count, AutoFix proposes fixes (never "fixed"),
titles are plain text cut at a word."""

from __future__ import annotations

from analyzers.autofix.view import proposed
from analyzers.report import AnalyzerReport, Finding, Skipped
from reporters import check_run, readable
from reporters.markdown import render_markdown_report


def test_a_title_is_plain_text_cut_at_a_word_with_an_ellipsis() -> None:
    t = readable.title("comment by alice: **Please** use `math.pi` here, ``not` 3.14``", 255)
    assert t == "comment by alice: Please use math.pi here, not 3.14"  # no raw ** or backticks
    long = readable.title("word " * 100, 40)
    assert long == "word word word word word word word…" and len(long.encode()) <= 40
    assert readable.title("é" * 300, 255).endswith("é…") and len(readable.title("é" * 300, 255).encode()) <= 255
    assert "@\u2060team" in readable.title("ping @team", 255)  # a title never notifies


def test_counts_say_what_they_count_and_no_title_repeats_itself() -> None:
    empty = AnalyzerReport("crscore", "CRScore")
    assert check_run.title_of(empty) == "No review comments scored"
    assert check_run.render(empty).summary.startswith("**No review comments scored.**")
    assert "**no review comments scored**" in render_markdown_report(empty)
    hunks = AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc": 0.67, "hunks": 9.0}, findings=[
        Finding("editing_rtc", f"function f{i}", scores={"rtc": 0.67}) for i in range(9)])
    assert check_run.title_of(hunks) == "9 of 9 changes explained"
    assert "| 9 hunks |" in "\n".join(readable.overview([hunks]))
    other = AnalyzerReport("toy", "Toy", findings=[Finding("toy", "t")])  # an analyzer that says nothing
    assert check_run.title_of(other) == "1 finding"  # the verdict, without its full stop
    own = AnalyzerReport("crscore", "CRScore", skipped=[
        Skipped("comment at a.py:3", "written by rtcbot: its own comments are not scored", "policy")] * 3)
    assert readable.headline(own) == "no review comments scored; 3 comments by rtcbot not scored"


def test_autofix_proposes_a_fix_and_says_how_it_was_verified_never_fixed() -> None:
    assert proposed("fixed", True) == "fix proposed, verified by re-scan and Patched RTC"
    assert proposed("fixed", False) == "fix proposed, verified by re-scan, not by Patched RTC"
    assert proposed("fixed", None) == "fix proposed, verified by re-scan"
    assert proposed("not fixed", True).startswith("fix proposed, not verified")
    report = AnalyzerReport("autofix", "AutoFix", scores={"findings": 3.0, "fixes_proposed": 3.0, "fixed": 3.0},
                            findings=[Finding("autofix", "r: " + proposed("fixed", True), scores={"rtc_pass": 1.0})])
    words = check_run.title_of(report) + check_run.render(report).summary + render_markdown_report(report)
    assert "3 fixes proposed for 3 Semgrep findings on changed lines" in words
    assert " fixed" not in words.replace("fixes", "")


def test_the_embedded_models_warning_is_said_once_and_nothing_reads_as_a_result_it_is_not() -> None:
    from reporters import render

    rs = [AnalyzerReport("editing_rtc", "EditingRTC", [Finding("editing_rtc", "f", scores={"rtc": 0.0})],
                         scores={"rtc": 0.0, "rtc_chrf": 0.5}, embedded=True),
          AnalyzerReport("review", "Review", scores={"hunks": 3.0, "candidates": 0.0}, embedded=True,
                         not_run="the model's answers were not usable: 0 of 8 in format"),
          AnalyzerReport("toy", "Toy", scores={"hunks": 3.0}, embedded=True)]
    for fmt in ("text", "markdown"):
        out = render(rs, fmt)
        assert out.count("These scores come from the embedded") == 1, fmt  # at the top, not under every report
        internals = render(rs, fmt, verbose=True) if fmt == "text" else out  # text: --verbose
        assert "over no findings" not in out and "rtc chrf" not in out and "RTC chrF 0.50" in internals
        assert "not run: the model's answers were not usable: 0 of 8 in format" in out
    assert readable.headline(rs[2]) == "no findings"  # an analyzer that says nothing: never "hunks 3 over …"
