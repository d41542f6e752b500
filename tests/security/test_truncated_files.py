"""A pull request with more files than GitHub lists cannot pass a gate on findings.

The attack, played as the pull request's author: GitHub lists at most 3,000 of a pull request's
files (100 a page), so the author adds 3,004 harmless files first and puts `eval(...)` in a file
after them. No analyzer sees it; on b3e8eed `fail_on: autofix.findings>0` passed, with a note
that "6 files were not analysed". Now the files GitHub did not list (its `changed_files` against
the listed count) are one "failed" item of every report: the gate cannot pass, and the check run
says how many files were not listed — on the App and on the Action, through the fake GitHub
(which lists as GitHub does: at most 3,000 files, at most 100 a page).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from analyzers.report import AnalyzerReport, Skipped
from bot.core.context import UNLISTED_ITEM, unlisted_files
from bot.core.gate import judge, parse_fail_on
from tests.bot.app_support import App
from tests.bot.test_action import EVENT, TOKEN, read_outputs
from tests.bot.test_jobs import finished, world  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.security.test_action import action
from tests.security.test_fail_closed import GATE, OK_PY, pr_files
from tests.security.test_semgrep_gates import _semgrep

EVIL_PY = "def run(expr):\n    return eval(expr)\n"
PADDING = 3004  # harmless files before the dangerous one: it is past GitHub's 3,000
NOTE = ("This pull request changes 3,006 files, but GitHub lists at most 3,000: "
        "6 files were not analysed.")
SAID = ("AutoFix could not scan 6 changed files: files GitHub did not list (6 of the pull request's "
        "3,006 changed files: GitHub lists at most 3,000)")


def files() -> list[dict[str, Any]]:
    padding = [{"sha": f"{i:040x}", "filename": f"assets/img{i}.png", "status": "added", "additions": 0,
                "deletions": 0, "changes": 0} for i in range(PADDING)]  # binary: no patch
    return [*pr_files(("ok.py", OK_PY)), *padding, *pr_files(("evil.py", EVIL_PY))]


def test_the_unlisted_files_are_one_failed_item_that_blocks_a_gate_on_findings() -> None:
    assert unlisted_files(2999, lambda: pytest.fail("a list under 3,000 is whole")) is None
    assert unlisted_files(3000, lambda: 3000) is None
    unlisted = unlisted_files(3000, lambda: 4321)
    assert unlisted is not None and unlisted.item == Skipped(
        UNLISTED_ITEM, "1,321 of the pull request's 4,321 changed files: GitHub lists at most 3,000", "failed",
        count=1321)
    unknown = unlisted_files(3000, lambda: None)  # the count could not be read: still fails closed
    assert unknown is not None and unknown.item.kind == "failed" and "could not be read" in unknown.item.reason
    report = AnalyzerReport("autofix", "AutoFix", skipped=[unlisted.item])
    verdict = judge(parse_fail_on(GATE), [report])
    assert verdict.fails and verdict.blocked["autofix"].endswith(
        "could not scan 1,321 changed files: files GitHub did not list (1,321 of the pull request's 4,321 "
        "changed files: GitHub lists at most 3,000)")
    assert not judge(parse_fail_on("autofix.unscanned>5000"), [report]).fails  # a coverage gate reads the count
    assert judge(parse_fail_on("autofix.unscanned>1000"), [report]).matched
    # stored and read back: the count kept; an item of one thing says no count
    assert AnalyzerReport.from_dict(report.to_dict()).skipped == [unlisted.item]
    assert "count" not in AnalyzerReport("x", "X", skipped=[Skipped("a.py", "why")]).to_dict()["skipped"][0]


@pytest.mark.slow
def test_app_fails_the_gate_over_the_files_github_did_not_list(world: Callable[..., App]) -> None:  # noqa: F811
    _semgrep()
    w = world(analyzers=["autofix"])
    w.gh.set_file(".github/rtcbot.yml", f'fail_on: "{GATE}"\n')
    pr = w.gh.add_pr(43, files=files())
    w.gh.set_file("ok.py", OK_PY, ref=pr.head_sha)
    w.gh.set_file("evil.py", EVIL_PY, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", 43))
    w.run()
    run = finished(w, "rtcbot / AutoFix", sha=pr.head_sha)
    summary = run["output"]["summary"]
    assert run["conclusion"] == "failure", summary
    verdict, rest = summary.split("\n\n", 1)
    assert verdict.startswith("**The gate fails: AutoFix could not scan") and rest.startswith(f"> **Note:** {NOTE}")
    assert f"**The gate cannot pass:** {SAID}" in summary
    assert run["annotations"] == []  # the eval was never seen: the gate failed on what was not listed


@pytest.mark.slow
def test_action_fails_the_gate_over_the_files_github_did_not_list(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Any) -> None:
    _semgrep()
    pr = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]
    gh = fake_github(repo=pr["base"]["repo"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(pr["number"], files=files(), head_sha=pr["head"]["sha"])
    gh.set_file("ok.py", OK_PY, ref=pr["head"]["sha"])
    gh.set_file("evil.py", EVIL_PY, ref=pr["head"]["sha"])
    proc = action(gh, scripted_llm(varied), tmp_path, analyzers="autofix", fail_on=GATE)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"rtcbot: {NOTE}" in proc.stderr and f"rtcbot: fail-on: The gate cannot pass: {SAID}" in proc.stderr
    (run,) = gh.check_runs.values()
    assert run["conclusion"] == "failure" and f"**The gate cannot pass:** {SAID}" in run["output"]["summary"]
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"
