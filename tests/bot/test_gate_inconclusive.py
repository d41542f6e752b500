"""A gate over inconclusive hunks (bot/core/gate.py, `gate_inconclusive`): it never passes
silently — by default it fails closed with the reason in words, on the command line and through
the Action — and the base branch's config may choose to read the conclusive hunks only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers.report import AnalyzerReport, Finding, Inconclusive
from bot.core.config import parse_config
from bot.core.gate import judge, metrics_of, parse_fail_on
from bot.entry import main
from tests.bot.test_action import pr_github, read_outputs, run_action  # noqa: F401  (fixture)
from tests.bot.test_cli import llm_args
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied

# two hunks: `varied` answers "nothing" to every regeneration but the baseline's, so it re-creates
# no hunk of the run
PATCH = ("--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x+1\n+    return x + 2\n # end f\n"
         "@@ -10,3 +10,3 @@\n def g():\n-    pass\n+    return None\n # end g\n")
WHY = ("The gate cannot pass: EditingRTC: 2 of 2 hunks are inconclusive (the model could not re-create any "
       "change of this run)")


def _reports(why: Inconclusive | None) -> list[AnalyzerReport]:
    found = [Finding("editing_rtc", "f", scores={"rtc": 1.0}),
             Finding("editing_rtc", "g", scores={"rtc": 0.0}, inconclusive=why)]
    return [AnalyzerReport("editing_rtc", "EditingRTC", found, scores={"rtc": 1.0})]


def test_the_gate_counts_inconclusive_items_apart_and_fails_closed_over_them() -> None:
    gate = parse_fail_on("editing_rtc.rtc<0.5")
    m = metrics_of(_reports(Inconclusive.EMBEDDED))
    assert m["editing_rtc"]["findings"] == 1 and m["editing_rtc"]["inconclusive"] == 1
    closed = judge(gate, _reports(Inconclusive.EMBEDDED))
    assert closed.fails and closed.blocked["editing_rtc"] == (
        "The gate cannot pass: EditingRTC: 1 of 2 hunks is inconclusive (the embedded model is too small to "
        "judge a change)")
    assert not judge(gate, _reports(Inconclusive.EMBEDDED), "ignore").fails  # the conclusive one: RTC 1.00
    assert not judge(gate, _reports(None)).fails
    assert not judge(parse_fail_on("editing_rtc.inconclusive>5"), _reports(Inconclusive.EMBEDDED)).fails  # a count


def test_gate_inconclusive_is_a_validated_key() -> None:
    assert parse_config("gate_inconclusive: ignore\n").config.gate_inconclusive == "ignore"
    assert parse_config(None).config.gate_inconclusive == "fail"
    bad = parse_config("gate_inconclusive: pass\n")
    assert bad.error is not None and "gate_inconclusive" in bad.error


def test_a_gate_over_an_all_inconclusive_run_exits_1_and_says_why(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(varied)
    patch, cfg = tmp_path / "p.diff", tmp_path / "rtcbot.yml"
    patch.write_text(PATCH)
    cfg.write_text('fail_on: "editing_rtc.rtc<0.5"\n')
    args = ["review", str(patch), "--config", str(cfg), *llm_args(srv)]
    r = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert r.exit_code == 1, r.output
    assert f"Error: {WHY}" in r.stderr.splitlines()
    first = r.stdout.splitlines()[0]
    assert first.startswith("**The gate fails: EditingRTC: 2 of 2 hunks are inconclusive")
    assert "What to do:" not in r.stdout  # no advice on an inconclusive hunk
    (rep,) = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)["reports"]
    assert [f["inconclusive"] for f in rep["findings"]] == ["every_item", "every_item"]
    assert [f["advice"] for f in rep["findings"]] == [None, None]
    cfg.write_text('fail_on: "editing_rtc.rtc<0.5"\ngate_inconclusive: ignore\n')
    ignored = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert ignored.exit_code == 0, ignored.output  # no conclusive hunk: rtc is not measured
    assert "note: fail_on: not measured in this run: editing_rtc.rtc<0.5" in ignored.stderr


@pytest.mark.slow
def test_the_action_fails_a_gate_over_inconclusive_hunks_and_says_why(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    gh = pr_github()
    proc = run_action(gh, scripted_llm(varied), tmp_path, analyzers="editing-rtc", fail_on="editing_rtc.rtc<0.5")
    assert proc.returncode == 1, proc.stderr[-3000:]
    (run,) = gh.check_runs.values()
    assert run["conclusion"] == "failure" and run["output"]["title"].startswith("The gate fails: EditingRTC: ")
    assert "hunks are inconclusive (the model could not" in run["output"]["summary"].splitlines()[0]
    assert not run["annotations"]  # an inconclusive hunk annotates nothing
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("**The gate fails: EditingRTC: ") and "inconclusive" in summary.splitlines()[0]
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"
