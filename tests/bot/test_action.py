"""`rtcbot action`: the GitHub Action's logic, end to end against a fake GitHub on loopback.

The end-to-end tests run `rtcbot action` as a subprocess, the way the Action's container does
(SynthesisRTC too, on a small repository checked out at the head, when a test command is set):
the event from tests/fixtures/github/webhooks/pull_request/, GITHUB_API_URL pointing at a
the fake GitHub REST server (tests/fakes/github_server.py) serving the PR's files from a real
diff, and the scripted LLM.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from bot.core.gate import FailOnError, metrics_of, parse_fail_on
from reporters.step_summary import RunOutcome, output_values
from reporters.workflow_commands import STEP_ANNOTATIONS_PER_LEVEL
from tests.fakes.github_server import FakeGitHub, files_from_diff
from tests.fakes.llm_server import RoundTrips, ScriptedLLM, varied
from tests.support import FIXTURES, ROOT, require

EVENT = FIXTURES / "github" / "webhooks" / "pull_request" / "opened.payload.json"
DIFF = FIXTURES / "prs" / "jsoup-b035b623d3.diff"
TOKEN = "ghs_test_token"


# ============================================================================ fail-on (pure)
def test_fail_on_grammar() -> None:
    f = parse_fail_on("editing_rtc.rtc<0.2 || autofix.findings > 0 && crscore.rel<=.5 or total.errors>=1")
    assert [[str(c) for c in g] for g in f.any_of] == [
        ["editing_rtc.rtc<0.2"], ["autofix.findings>0", "crscore.rel<=0.5"], ["total.errors>=1"]]
    assert f.text.startswith("editing_rtc.rtc")
    assert not parse_fail_on("  ")
    g = parse_fail_on("editing-rtc.rtc@3 != 1 and editing_rtc.lift==-0.5e0")
    assert [str(c) for c in g.any_of[0]] == ["editing_rtc.rtc@3!=1", "editing_rtc.lift==-0.5"]


@pytest.mark.parametrize(("text", "message"), [
    ("editing_rtc.rtc", "expected a comparison"),
    ("editing_rtc.rtc < high", "expected a comparison"),
    ("rtc<0.2", "expected a comparison"),
    ("editing_rtc.rtc<0.2 autofix.findings>0", "missing '&&' or '||'"),
    ("|| editing_rtc.rtc<0.2", "has no comparison before it"),
    ("editing_rtc.rtc<0.2 &&", "ends without a comparison"),
    ("nosuch.rtc<0.2", "unknown analyzer 'nosuch'"),
    ("total.rtc<0.2", "'total' has only counts"),
    ("editing_rtc.rtc=<0.2", "expected a comparison"),
])
def test_fail_on_rejects_bad_expressions_clearly(text: str, message: str) -> None:
    with pytest.raises(FailOnError, match=re.escape(message)):
        parse_fail_on(text)


def test_fail_on_evaluation_and_missing_metrics() -> None:
    reports = [
        AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc": 0.1},
                       findings=[Finding("editing_rtc", "h", path="a.py", start_line=1)]),
        AnalyzerReport("autofix", "AutoFix", findings=[
            Finding("autofix", "r", path="b.py", start_line=2, level="failure",
                    fix=Fix("b.py", 2, 2, "x = 1\n"))], skipped=[Skipped("c.png", "binary")]),
        AnalyzerReport("crscore", "CRScore", error="LLM down"),
    ]
    m = metrics_of(reports)
    assert m["autofix"]["fixes"] == 1 and m["autofix"]["failures"] == 1 and m["autofix"]["skipped"] == 1
    assert m["total"]["findings"] == 2 and m["total"]["errors"] == 1
    assert parse_fail_on("editing_rtc.rtc<0.2").evaluate(m) == (["editing_rtc.rtc<0.2"], [])
    assert parse_fail_on("editing_rtc.rtc<0.05").evaluate(m) == ([], [])
    matched, missing = parse_fail_on("crscore.rel<0.3 || autofix.fixes>0 && total.errors>0").evaluate(m)
    assert matched == ["autofix.fixes>0 && total.errors>0"] and missing == ["crscore.rel<0.3"]


# ============================================================================ fake GitHub
def event_pr(fake_github: Callable[..., FakeGitHub], diff: str) -> tuple[FakeGitHub, str]:
    """The fake GitHub serving the event's pull request with `diff`'s files, GITHUB_TOKEN
    granted; and the pull request's base commit (where the Action reads config and records)."""
    event = json.loads(EVENT.read_text(encoding="utf-8"))
    gh = fake_github(repo=event["repository"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(event["pull_request"]["number"], files=files_from_diff(diff),
              head_sha=event["pull_request"]["head"]["sha"])
    return gh, event["pull_request"]["base"]["sha"]


@pytest.fixture
def pr_github(fake_github: Callable[..., FakeGitHub]) -> Callable[..., FakeGitHub]:
    """The shared fake GitHub serving the event's pull request: the files of a real diff, a
    binary file, and enough generated files to need a second page of 100; GITHUB_TOKEN granted."""
    def make(comments: Sequence[tuple[str, int, str]] = (), *, read_only: bool = False,
             files_status: int | None = None) -> FakeGitHub:
        require(EVENT.is_file() and DIFF.is_file(), "the fixtures are missing")
        event = json.loads(EVENT.read_text(encoding="utf-8"))
        gh = fake_github(repo=event["repository"]["full_name"])
        gh.grant_token(TOKEN)
        gh.read_only_checks = read_only
        files = files_from_diff(DIFF.read_text(encoding="utf-8"))
        files.append({"filename": "docs/logo.png", "status": "added", "additions": 0, "deletions": 0, "changes": 0})
        files += [{"filename": f"gen/f{i}.bin", "status": "added", "changes": 0} for i in range(100)]
        number = event["pull_request"]["number"]
        gh.add_pr(number, files=files, head_sha=event["pull_request"]["head"]["sha"])
        for path, line, body in comments:
            gh.add_comment(number, path, line, body)
        if files_status is not None:
            gh.fail_next(10, status=files_status, retry_after=None, match="/files")
        return gh

    return make


def run_action(gh: FakeGitHub, llm: ScriptedLLM, tmp_path: Path, *, event: Path | str = EVENT,
               **inputs: str) -> subprocess.CompletedProcess[str]:
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RTCBOT_LLM"))}
    env.update({
        "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": TOKEN, "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
        "INPUT_LLM-BASE-URL": llm.base_url, "INPUT_MODEL": llm.model,
    })
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return subprocess.run([sys.executable, "-m", "bot", "action"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=400, check=False)


def read_outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


# ============================================================================ end to end
@pytest.mark.slow
def test_action_posts_check_runs_summary_and_outputs(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    path = "src/main/java/org/jsoup/internal/StringUtil.java"
    gh = pr_github([(path, 312, "Why is this check removed? A StringBuilder would be clearer.")])
    llm = scripted_llm(RoundTrips())  # passes every baseline: its hunks are conclusive, and annotated
    proc = run_action(gh, llm, tmp_path, analyzers="editing-rtc,crscore", sarif_file="out/rtcbot.sarif")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "::warning" not in proc.stdout and "::notice" not in proc.stdout

    runs = {r["name"]: r for r in gh.check_runs.values()}
    assert set(runs) == {"rtcbot / EditingRTC", "rtcbot / CRScore"}
    event = json.loads(EVENT.read_text())
    for run in runs.values():
        assert run["head_sha"] == event["pull_request"]["head"]["sha"]
        analyzer = {"rtcbot / EditingRTC": "editing_rtc", "rtcbot / CRScore": "crscore"}[run["name"]]
        assert run["external_id"] == f"{event['pull_request']['number']}:{analyzer}"  # as the App's
        assert run["status"] == "completed" and run["conclusion"] == "neutral"
        assert run["output"]["title"] and run["output"]["text"].startswith("## ")
    edit = runs["rtcbot / EditingRTC"]
    assert len(edit["annotations"]) >= 5
    assert {a["path"] for a in edit["annotations"]} >= {"src/main/java/org/jsoup/internal/StringUtil.java"}
    crs = runs["rtcbot / CRScore"]
    assert [(a["path"], a["start_line"]) for a in crs["annotations"]] == [(path, 312)]
    # both pages of PR files were read; the second page's binary files show up as skipped
    assert sum(1 for r in gh.requests if r.method == "GET" and r.path.endswith("/files")) == 2
    assert llm.request_count > 0

    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("**") and "\n# rtcbot: Codertocat/Hello-World#2\n" in summary  # the verdict first
    assert "Posted 2 check run(s)" in summary and "## EditingRTC" in summary and "## CRScore" in summary
    assert "gen/f99.bin" in summary and "docs/logo.png" in summary
    outputs = read_outputs(tmp_path / "output.txt")
    assert outputs["annotations"] == "check-runs" and outputs["conclusion"] == "neutral"
    assert int(outputs["findings"]) == len(edit["annotations"]) + 1
    scores = json.loads(outputs["scores"])
    assert "rtc" in scores["editing_rtc"] and "rel" in scores["crscore"]
    assert outputs["editing-rtc-rtc"] == f"{scores['editing_rtc']['rtc']:.6g}"
    sarif = json.loads((tmp_path / "workspace" / "out" / "rtcbot.sarif").read_text())
    assert [r["automationDetails"]["id"] for r in sarif["runs"]] == ["rtcbot/editing_rtc/", "rtcbot/crscore/"]


@pytest.mark.slow
def test_action_falls_back_to_workflow_commands_on_403(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh = pr_github(read_only=True)
    llm = scripted_llm(RoundTrips())  # passes every baseline: conclusive hunks, which the gate counts
    proc = run_action(gh, llm, tmp_path, analyzers="editing-rtc", fail_on="total.findings>0")
    assert proc.returncode == 1, proc.stderr[-3000:]  # fail-on matched
    assert gh.check_runs == {}
    assert "cannot create check runs (403" in proc.stderr and "fail-on matched: total.findings>0" in proc.stderr
    commands = [ln for ln in proc.stdout.splitlines() if ln.startswith("::")]
    assert 5 <= len(commands) <= STEP_ANNOTATIONS_PER_LEVEL  # EditingRTC findings are notices
    assert all(re.match(r"::notice file=[^,]+,line=\d+,endLine=\d+,title=EditingRTC%3A .*::\S", c) for c in commands)
    summary = (tmp_path / "summary.md").read_text()
    assert "**This token cannot create check runs**" in summary and "## EditingRTC" in summary
    assert "fail-on `total.findings>0`: **failed**" in summary
    outputs = read_outputs(tmp_path / "output.txt")
    assert outputs["annotations"] == "workflow-commands" and outputs["conclusion"] == "failure"


@pytest.mark.slow
def test_action_bad_input_is_one_clear_line(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh = pr_github()
    llm = scripted_llm(varied)
    proc = run_action(gh, llm, tmp_path, analyzers="editing-rtc", fail_on="editing_rtc.rtc <")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "Error: fail-on: expected a comparison like editing_rtc.rtc<0.2 at column 1: 'editing_rtc.rtc <'"]
    assert gh.requests == [] and llm.request_count == 0


@pytest.mark.slow
def test_check_runs_are_completed_when_the_run_cannot_finish(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh = pr_github(files_status=404)
    llm = scripted_llm(varied)
    proc = run_action(gh, llm, tmp_path, analyzers="editing-rtc")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "Error: GitHub answered 404: Not Found"
    (run,) = gh.check_runs.values()
    assert run["status"] == "completed" and run["conclusion"] == "neutral"
    assert run["output"]["title"] == "rtcbot could not finish" and "404" in run["output"]["summary"]


@pytest.mark.slow
@pytest.mark.parametrize("command_from", ["input", "base config"])
def test_action_runs_synthesis_rtc_with_a_test_command(
        command_from: str, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],
        tmp_path: Path) -> None:
    """A small repository checked out at the head: `test-command` (or the base commit's
    `test_command`) turns SynthesisRTC on, and it round-trips a changed region against the
    repository's own tests in the sandbox."""
    from analyzers.sandbox.box import Sandbox, SandboxUnavailable
    from tests.analyzers.synthesis_rtc.test_analyzer import DIFF as CALC_DIFF
    from tests.analyzers.synthesis_rtc.test_analyzer import MODULE_NEW, TESTS
    from tests.fakes.llm_server import last_user_text

    try:
        python = Sandbox().python
    except SandboxUnavailable as e:
        require(False, f"no sandbox here: {e}")
    gh, base = event_pr(fake_github, CALC_DIFF)
    event = json.loads(EVENT.read_text(encoding="utf-8"))
    command = f"{python} -m unittest -q test_calc"
    config = "analyzers: {editing_rtc: false, crscore: false, autofix: false}\n"
    config += "options: {synthesis_rtc: {max_regions: 1, test_timeout_s: 30}}\n"
    inputs = {"test_command": command}
    if command_from == "base config":
        config += f"test_command: {command}\n"
        inputs = {}
    gh.set_file(".github/rtcbot.yml", config, ref=base)
    workspace = tmp_path / "workspace"  # the checkout at the head, as actions/checkout leaves it
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text(event["pull_request"]["head"]["sha"] + "\n")
    (workspace / "calc.py").write_text(MODULE_NEW)
    (workspace / "test_calc.py").write_text(TESTS)

    def respond(req: dict[str, Any]) -> str | list[str]:
        if "[region]" in last_user_text(req):
            return [f"desc {i}" for i in range(int(req.get("n") or 1))]
        return "```python\npass\n```"  # never the region again: the suite fails

    llm = scripted_llm(respond)
    proc = run_action(gh, llm, tmp_path, **inputs)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = gh.check_runs.values()
    assert run["name"] == "rtcbot / SynthesisRTC" and run["status"] == "completed"
    assert "needs a checkout" not in run["output"]["summary"], run["output"]["summary"]
    assert [a["path"] for a in run["annotations"]] == ["calc.py"]
    assert "- overall: RTC pass 0.00" in run["output"]["summary"]  # the figures, named for a reader
    outputs = read_outputs(tmp_path / "output.txt")
    assert outputs["synthesis-rtc-findings"] == "1" and outputs["synthesis-rtc-rtc-pass"] == "0"
    assert llm.request_count > 0


# ============================================================================ action.yml and the workflow
def test_every_action_input_reaches_the_command() -> None:
    import yaml

    from bot.action.command import command

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "docker" and action["runs"]["args"] == ["action"]
    envvars = {e for p in command.params for e in (p.envvar if isinstance(p.envvar, list) else [p.envvar]) if e}
    for name in action["inputs"]:
        assert f"INPUT_{name.upper()}" in envvars, f"input {name} is not read by `rtcbot action`"
    for name in ("conclusion", "findings", "annotations", "scores", "sarif-file"):
        assert name in action["outputs"]
    values = output_values([], RunOutcome())
    assert set(action["outputs"]) <= set(values)


def test_ready_workflow_has_the_right_permissions() -> None:
    import yaml

    wf = yaml.safe_load((ROOT / "docs" / "workflows" / "rtcbot.yml").read_text(encoding="utf-8"))
    triggers = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads `on` as true
    assert "pull_request" in triggers and "pull_request_target" not in triggers
    # pull-requests: write for the committable suggestions (the `reporters` input's default, pr-review)
    assert wf["permissions"] == {"contents": "read", "pull-requests": "write", "checks": "write"}
    steps = wf["jobs"]["rtcbot"]["steps"]
    rtcbot = next(s for s in steps if s.get("id") == "rtcbot")
    with_ = rtcbot["with"]
    parse_fail_on(with_["fail-on"])  # the example expression is valid
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == with_["sarif-file"] and "category" not in upload["with"]


def test_the_action_module_stays_wiring() -> None:
    """Issue #13: bot/action/run.py is wiring over the shared core (≤ 250 lines); logic goes to
    the modules the App and the CLI share."""
    lines = (Path(__file__).parents[2] / "bot" / "action" / "run.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"bot/action/run.py has {len(lines)} lines"


def test_check_run_links_are_on_the_pull_requests_own_server() -> None:
    from bot.action.workflow import PullRequest

    pr = PullRequest("o", "r", 1, "h" * 40, "b" * 40, html_url="https://ghe.example/o/r/pull/1")
    assert pr.run_links({"crscore": 7}) == {"crscore": "https://ghe.example/o/r/runs/7"}
    assert PullRequest("o", "r", 1, "h", "b").run_links({"crscore": 7}) == {"crscore": "/o/r/runs/7"}
