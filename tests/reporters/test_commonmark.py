"""Code in a report renders as code: a full report (every analyzer's findings, multi-line code,
backticks inside the code, code inside list items) as Markdown, as a check run's summary and
text and as the step summary, parsed by a CommonMark parser (markdown-it-py, as GitHub reads
it): every code block holds exactly one piece of the code, and no fence shows as text."""

from __future__ import annotations

import re

from analyzers.report import AnalyzerReport, Finding, Fix
from reporters import check_run
from reporters.base import Target
from reporters.markdown import render_reports_markdown
from reporters.step_summary import RunOutcome, step_summary
from tests.security.markdown_audit import parser

REGENERATED = [
    "def running_min(xs):\n    out = []\n    for x in xs:\n        out.append(min(out[-1:] + [x]))\n\n    return out",
    "def running_min(xs):\n    '''Uses ``` in a docstring, and `ticks`.'''\n        return xs",
    "x = 1\n\n\n    y = 2  # indented after blank lines",
]
BASELINE = "def running_min(xs):\n    return xs\n````\nnot a fence end"
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-eval(x)\n+ast.literal_eval(x)"
COMMENT = "Please use this:\n```suggestion\nreturn min(xs)\n```\nthanks"
FIXED = "    return ast.literal_eval(expr)\n    # `eval` ```was``` here"
CODE = {*REGENERATED, BASELINE, DIFF, COMMENT, FIXED, FIXED + "\n"}


def reports() -> list[AnalyzerReport]:
    hunk = Finding("editing_rtc", "function running_min", "EditingRTC 0.33", "stats.py", 3, 9,
                   scores={"rtc": 0.33, "lift": 0.33},
                   evidence={"descriptions": ["Keep `the` first", "Use min", "Loop"], "regenerated": REGENERATED,
                             "baseline_regenerated": BASELINE, "sims": {"exact": [1.0, 0.0, 0.0]}})
    comment = Finding("crscore", "comment by alice: Please use this:", "Con 0.50", "stats.py", 4, 4,
                      scores={"con": 0.5, "comp": 0.4, "rel": 0.6},
                      evidence={"comment": COMMENT, "pseudo_references": ["The loop keeps the first item."]})
    fix = Finding("autofix", "python-code-injection: fix proposed, verified by re-scan and Patched RTC",
                  "eval() runs any code", "app.py", 7, 7, level="warning", scores={"fixed": 1.0, "rtc_pass": 1.0},
                  evidence={"diff": DIFF, "regenerated": FIXED, "remaining": [], "nested": {"code": [DIFF]}},
                  fix=Fix("app.py", 7, 7, FIXED + "\n"))
    return [AnalyzerReport("editing_rtc", "EditingRTC", [hunk], scores={"rtc": 0.33, "hunks": 1.0}),
            AnalyzerReport("crscore", "CRScore", [comment], scores={"rel": 0.6, "con": 0.5, "comp": 0.4}),
            AnalyzerReport("autofix", "AutoFix", [fix], scores={"findings": 1.0, "fixes_proposed": 1.0,
                                                                "fixed": 1.0})]


def code_blocks_and_stray_fences(markdown: str) -> tuple[list[str], list[str]]:
    tokens = parser().parse(markdown)
    blocks = [t.content.rstrip("\n") for t in tokens if t.type in ("fence", "code_block")]
    stray = [t.content for t in tokens if t.type == "inline" and re.search(r"(^|\n)\s*`{3,}", t.content)]
    return blocks, stray


def rendered() -> dict[str, str]:
    rs = reports()
    target = Target(repo="o/r", number=4, head_sha="c" * 40, url="https://github.com/o/r/pull/4")
    out = {"markdown": render_reports_markdown(rs, repo="o/r", head_sha="c" * 40),
           "step summary": step_summary(target, rs, RunOutcome())}
    for r in rs:
        run = check_run.render(r, target=target)
        out[f"{r.name} summary"], out[f"{r.name} text"] = run.summary, run.text
    return out


def test_every_code_block_holds_exactly_the_code_and_no_fence_shows_as_text() -> None:
    seen: set[str] = set()
    for where, markdown in rendered().items():
        blocks, stray = code_blocks_and_stray_fences(markdown)
        assert not stray, (where, stray)
        for b in blocks:
            assert b in CODE or b.startswith("dismissals:\n  - finding: "), (where, b)  # or rtcbot's example
        seen |= set(blocks)
    assert {*REGENERATED, BASELINE, DIFF, COMMENT, FIXED} <= seen  # every piece shown, as code


def test_a_list_item_indented_on_its_first_line_only_would_be_caught() -> None:
    """The test's own check fails on what the issue saw: code under a list item whose lines
    after the first are not indented (a paragraph and a stray fence)."""
    broken = "1.\n   ```\n   def f():\nreturn 1\n```\n"
    blocks, stray = code_blocks_and_stray_fences(broken)
    assert blocks != ["def f():\nreturn 1"] or stray
