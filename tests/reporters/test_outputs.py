"""The reporters other than check runs and SARIF: workflow commands, the step summary and the
step's outputs (the Action), text / JSON / Markdown (the command line), and the registry.

Attacks covered: text from a pull request (finding titles and messages, file names with `,`
`:` `%` and newlines) cannot start a workflow command of its own or break the GITHUB_OUTPUT
file (escaped properties and data; heredoc delimiters no value can guess).
"""

from __future__ import annotations

import inspect
import io
import json
import re
from pathlib import Path

import pytest

from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from reporters import FORMATS, REPORTERS, Target, UnknownReporter, render, reporter_class
from reporters.step_summary import (
    OutputsReporter,
    RunOutcome,
    StepSummaryReporter,
    output_values,
    write_outputs,
)
from reporters.workflow_commands import (
    JOB_ANNOTATIONS,
    STEP_ANNOTATIONS_PER_LEVEL,
    WorkflowCommandsReporter,
    workflow_commands,
)


def _findings(n: int, level: str) -> list[Finding]:
    return [Finding("autofix", f"t{i}, with: colon", f"line one\nline {i} 100%", path="src/a,b.py",
                    start_line=i + 1, end_line=i + 1, level=level, scores={"fixed": i / n})  # type: ignore[arg-type]
            for i in range(n)]


def reports() -> list[AnalyzerReport]:
    return [
        AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc@3": 0.5, "lift": 0.25},
                       findings=[Finding("editing_rtc", "h | pipe", "m", path="a.py", start_line=3)],
                       skipped=[Skipped("logo.png", "binary file")]),
        AnalyzerReport("autofix", "AutoFix", findings=[
            Finding("autofix", "r", path="b.py", start_line=2, level="failure", fix=Fix("b.py", 2, 2, "x = 1\n"))]),
        AnalyzerReport("crscore", "CRScore", error="LLM down"),
    ]


def test_workflow_commands_respect_per_step_limits_and_escape() -> None:
    report = AnalyzerReport("autofix", "AutoFix", findings=[
        *_findings(15, "failure"), *_findings(12, "warning"), *_findings(3, "notice"),
        Finding("autofix", "no location")])
    lines, shown, left = workflow_commands([report])
    levels = [ln.split(" ", 1)[0] for ln in lines]
    assert levels.count("::error") == STEP_ANNOTATIONS_PER_LEVEL
    assert levels.count("::warning") == STEP_ANNOTATIONS_PER_LEVEL
    assert levels.count("::notice") == 3
    assert shown == 23 and left == 7 and shown <= JOB_ANNOTATIONS
    assert lines[0] == ("::error file=src/a%2Cb.py,line=1,endLine=1,title=AutoFix%3A t0%2C with%3A colon"
                        "::line one%0Aline 0 100%25")
    assert all("\n" not in ln for ln in lines)


def test_workflow_commands_reporter_prints_when_flushed() -> None:
    out = io.StringIO()
    reporter = WorkflowCommandsReporter(out)
    reporter.start(Target(), {})
    for r in reports():
        reporter.publish(r)
    assert out.getvalue() == ""
    assert reporter.flush() == (2, 0)
    assert out.getvalue().splitlines()[0].startswith("::error file=b.py,line=2,endLine=2,title=AutoFix%3A r::")


def test_outputs_file_format(tmp_path: Path) -> None:
    values = output_values(reports(), RunOutcome(conclusion="neutral"))
    assert values["editing-rtc-rtc-3"] == "0.5" and values["findings"] == "2"
    assert json.loads(values["scores"])["editing_rtc"] == {"rtc@3": 0.5, "lift": 0.25}
    values["multi"] = "a\nb"
    out = tmp_path / "out"
    write_outputs(out, values)
    text = out.read_text()
    assert "conclusion=neutral\n" in text and "editing-rtc-findings=1\n" in text
    assert re.search(r"^multi<<(rtcbot_\w+)\na\nb\n\1$", text, flags=re.MULTILINE)


def test_step_summary_and_outputs_reporters(tmp_path: Path) -> None:
    summary, outputs = StepSummaryReporter(tmp_path / "summary.md"), OutputsReporter(tmp_path / "out")
    target = Target(repo="o/r", number=4, head_sha="f" * 40, title="Fix the parser")
    outcome = RunOutcome(mode="workflow-commands", mode_note="**This token cannot create check runs**",
                         conclusion="failure", gate="total.findings>0", matched=("total.findings>0",),
                         missing=("crscore.rel<0.3",), notes=("the defaults apply",))
    for reporter in (summary, outputs):
        reporter.start(target, {})
        for r in reports():
            reporter.publish(r)
        reporter.conclude(outcome)
        reporter.flush()
    text = (tmp_path / "summary.md").read_text()
    assert text.startswith("**The gate fails: total.findings>0. EditingRTC: ")  # the verdict first
    assert "\n# rtcbot: o/r#4\n\n**Fix the parser** · head `ffffffffffff`" in text
    assert "fail-on `total.findings>0`: **failed**: `total.findings>0`" in text
    assert "`crscore.rel<0.3`" in text and "> the defaults apply" in text
    assert "## EditingRTC" in text and "## CRScore" in text and "h \\| pipe" in text
    values = dict(ln.split("=", 1) for ln in (tmp_path / "out").read_text().splitlines())
    assert values["annotations"] == "workflow-commands" and values["conclusion"] == "failure"


def test_step_summary_stays_under_a_mebibyte(tmp_path: Path) -> None:
    big = AnalyzerReport("editing_rtc", "EditingRTC", skipped=[Skipped(f"vendor/ß{i}.bin", "ü" * 200)
                                                               for i in range(10_000)])
    reporter = StepSummaryReporter(tmp_path / "s.md")
    reporter.start(Target(repo="o/r", number=1), {})
    reporter.publish(big)
    text = reporter.flush()
    assert len(text.encode("utf-8")) <= 1024 * 1024 and "left out" in text


def test_text_json_markdown() -> None:
    rs = reports()
    data = json.loads(render(rs, "json"))
    assert [(r["name"], r["title"]) for r in data["reports"]] == [
        ("editing_rtc", "EditingRTC"), ("autofix", "AutoFix"), ("crscore", "CRScore")]
    assert data["reports"][0]["findings"][0]["cwe"] == [] and "comment_id" in data["reports"][0]["findings"][0]
    assert data["not_analysed"] == [{"what": "logo.png", "reasons": ["binary file"], "hunks": 0,
                                     "analyzers": ["EditingRTC"], "failed": True}]
    md = render(rs, "markdown")
    assert "## EditingRTC" in md and "`a.py:3` **h \\| pipe**" in md and "**could not run: LLM down**" in md
    assert md.startswith("**EditingRTC: ") and "\n\n| analysis | in words | scored | conclusion |" in md
    assert md.count("`logo.png`: binary file") == 1  # skipped once, not under every analyzer
    text = render(rs, "text")
    assert "EditingRTC" in text and "error: LLM down" in text and "- logo.png: binary file (EditingRTC)" in text
    assert json.loads(render(rs, "sarif"))["version"] == "2.1.0"
    with pytest.raises(UnknownReporter, match="unknown format 'yaml'"):
        render(rs, "yaml")


def test_every_registered_reporter_keeps_the_protocol() -> None:
    assert set(FORMATS) == {"text", "json", "markdown", "sarif", "github-review"}
    for name in REPORTERS:
        cls = reporter_class(name)
        assert cls.name == name
        for method in ("from_sinks", "start", "publish", "flush"):
            assert callable(getattr(cls, method, None)), f"{name} lacks {method}"
        assert list(inspect.signature(cls.start).parameters) == ["self", "target", "analyzers"]
    with pytest.raises(UnknownReporter, match="unknown reporter 'pr-reviews'"):
        reporter_class("pr-reviews")


def test_one_report_reads_the_same_in_the_check_run_the_step_summary_and_markdown(tmp_path: Path) -> None:
    from reporters.check_run import render as check_run_render
    from reporters.readable import headline

    report = AnalyzerReport(
        "autofix", "AutoFix", scores={"findings": 2.0, "fixed": 1.0, "fix_pct": 50.0},
        findings=[Finding("autofix", "python-code-injection", "eval() on input runs any code", "src/app.py", 7, 7,
                          level="warning", scores={"fixed": 1.0, "rtc_pass": 1.0},
                          evidence={"description": "Use ast.literal_eval.", "regenerated": ["a", "b"]},
                          fix=Fix("src/app.py", 7, 7, "    return ast.literal_eval(expr)\n")),
                  Finding("autofix", "python-weak-hash", "md5 is weak", "src/h.py", 3, 3, scores={"fixed": 0.0})])
    target = Target(repo="o/r", number=4, head_sha="c" * 40, url="https://github.com/o/r/pull/4")
    words = headline(report)
    assert words == "1 fix proposed for 2 Semgrep findings on changed lines; 1 verified by re-scan and Patched RTC"
    run = check_run_render(report, target=target)
    summary = StepSummaryReporter(tmp_path / "s.md")
    summary.start(target, {})
    summary.publish(report)
    summary.conclude(RunOutcome(links={"autofix": "https://github.com/o/r/runs/9"},
                                conclusions={"autofix": "neutral"}))
    step = summary.flush()
    md = render([report], "markdown")
    link = f"/o/r/blob/{'c' * 40}/src/app.py#L7"
    for text in (run.summary + run.text, step, md):
        assert words in text
        # counts whole, names read, in the researchers' fold
        assert "- overall: findings 2 · verified by re-scan 1 · verified by re-scan % 50%" in text
        assert "2.000" not in text and "fix_pct" not in text
        assert "eval() on input runs any code" in text or "eval() on input runs any code" in json.dumps(
            run.annotations)
    assert link in run.text and link in step
    assert "[AutoFix](https://github.com/o/r/runs/9)" in step and "| neutral |" in step
    assert '["a", "b"]' not in run.summary and "1. a" in run.summary  # evidence as items, not JSON
