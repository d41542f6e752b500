"""The verdict (reporters/verdict.py): one sentence first in every output — the gate's result
where one is set, then what each analysis found — and the model's internals behind a fold."""

from __future__ import annotations

import json
from typing import Any

from analyzers.report import AnalyzerReport, CannotPass, Finding, Inconclusive, Skipped
from reporters import check_run, pr_review, readable, render, verdict
from reporters.base import Target
from reporters.step_summary import RunOutcome, step_summary
from reporters.verdict import Gate


def _hunk(i: int, rtc: float, why: Inconclusive | None = None, missed: tuple[str, ...] = ()) -> Finding:
    return Finding("editing_rtc", f"function f{i}", "What the model understood: \"it adds one\"", path="a.py",
                   start_line=i * 10 + 1, end_line=i * 10 + 2, scores={"rtc": rtc, "lift": rtc, "rtc_chrf": 0.9},
                   evidence={"descriptions": ["it adds one"]}, key=f"k{i}", inconclusive=why, missed=list(missed))


def reports() -> list[AnalyzerReport]:
    found = [_hunk(0, 1.0), _hunk(1, 0.0, missed=("return @alice + 1",)), _hunk(2, 0.0, Inconclusive.BASELINE)]
    return [AnalyzerReport("editing_rtc", "EditingRTC", found, scores={"rtc": 0.5, "hunks": 2.0, "inconclusive": 1.0},
                           notes=["1 of 14 answers were not in the expected format"], usage={"samples": 14},
                           planned=9, cut_by="LLM budget")]


GATE = Gate("editing_rtc.rtc<0.6", True, (CannotPass("EditingRTC: 1 of 3 hunks is inconclusive "
                                                     "(the model could not give back the unchanged lines)"),))


def first_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.strip())


def test_the_verdict_is_the_gate_then_what_was_found_with_the_partial_count() -> None:
    said = verdict.sentence(reports(), GATE)
    assert said.startswith("The gate fails: EditingRTC: 1 of 3 hunks is inconclusive")
    assert said.endswith("1 of 2 changes explained; 1 unclear; 1 inconclusive (the model could not give back the "
                         'unchanged lines when asked for an unspecified "Edit."); 3 of 9 hunks scored (LLM budget).')
    passes = verdict.sentence(reports(), Gate("editing_rtc.rtc<0.1"))
    assert passes.startswith("The gate passes (editing_rtc.rtc<0.1). 1 of 2")
    assert verdict.sentence(reports()).startswith("1 of 2 changes explained")  # no gate: what was found
    assert "| EditingRTC |" in "\n".join(readable.overview(reports())) \
        and "| 3 of 9 hunks |" in "\n".join(readable.overview(reports()))


def test_the_verdict_is_the_first_line_of_every_output() -> None:
    rs, said = reports(), verdict.sentence(reports(), GATE)
    assert first_line(render(rs, "markdown", GATE)) == f"**{readable.cell(said)}**"
    assert first_line(render(rs, "text", GATE)).startswith("The gate fails: EditingRTC: 1 of 3 hunks")
    assert json.loads(render(rs, "json", GATE))["verdict"] == said
    review = json.loads(render(rs, "github-review", GATE))  # nothing to suggest: no review, the note says so
    assert review["event"] is None and review["note"].startswith(f"**{readable.cell(said)}**")
    out = check_run.render(rs[0], conclusion="failure", crossed=list(GATE.reasons))
    failed = Gate(fails=True, reasons=GATE.reasons)  # a check run knows its conclusion, not the expression
    assert first_line(out.summary) == f"**{readable.cell(verdict.sentence(rs, failed))}**"
    assert out.title.startswith("The gate fails: EditingRTC: 1 of 3 hunks is inconclusive")
    outcome = RunOutcome(gate=GATE.expression, blocked=GATE.reasons, conclusion="failure")
    assert first_line(step_summary(Target("o/r", 7, "abc"), rs, outcome)) == f"**{readable.cell(said)}**"


def test_inconclusive_hunks_get_no_advice_and_no_annotation_and_advice_names_what_was_missed() -> None:
    rs = reports()
    md = render(rs, "markdown")
    todo = md.split("What to do:", 1)[1].split("<details>", 1)[0]
    assert "function f1" in todo and "function f2" not in todo and "function f0" not in todo
    assert "no description carried “return @\u2060alice + 1”" in todo  # the author's text, inert
    assert "inconclusive: the model could not give back the unchanged lines" in md  # in the findings' fold
    annotated = [a["title"] for a in check_run.render(rs[0]).annotations]
    assert annotated == ["function f0", "function f1"]


def test_the_models_internals_are_folded_and_said_in_text_only_when_verbose() -> None:
    rs = reports()
    md = render(rs, "markdown")
    fold = md.split("<summary>How it was measured", 1)[1].split("</details>", 1)[0]
    before = md.split("<summary>How it was measured", 1)[0]
    for internal in ("RTC chrF", "lift over the baseline", "LLM work: 14 samples", "1 of 14 answers were not"):
        assert internal in fold and internal not in before, internal
    assert "RTC is the share of descriptions that re-create it exactly (1.00 best)" in fold
    summary = check_run.render(rs[0]).summary
    assert "LLM work" not in summary.split("<summary>How it was measured", 1)[0]
    assert "What the model understood of the lowest" in summary
    plain, verbose = render(rs, "text"), render(rs, "text", verbose=True)
    assert "RTC chrF" not in plain and "LLM work" not in plain
    assert "RTC chrF" in verbose and "LLM work: 14 samples" in verbose


def test_a_review_body_opens_with_the_verdict() -> None:
    fix = Finding("toy", "t", path="a.py", start_line=1, end_line=1)
    rs = [AnalyzerReport("toy", "Toy", [fix])]
    body = pr_review.review_body([], (), rs)
    assert body.split("\n", 1)[0] == "**1 finding.**"


def test_not_run_and_skipped_reports_read_as_what_they_are() -> None:
    nothing: list[AnalyzerReport] = [AnalyzerReport("editing_rtc", "EditingRTC", not_run="no changed code to re-create",
                                                    skipped=[Skipped("a.svg", "not code (image)", "policy", "a.svg")])]
    assert verdict.sentence(nothing) == "Not run: no changed code to re-create."
    data: dict[str, Any] = json.loads(render(nothing, "json"))
    assert data["verdict"] == "Not run: no changed code to re-create."
