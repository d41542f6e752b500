"""The Action trusts only the base commit and runs nothing of a pull request's (issue #21).

Attacks covered, each by a real `rtcbot action` process against the fake GitHub on loopback:
- a pull request ships its own `.github/rtcbot.yml` (`ignore: ["*"]`, a `fail_on` that never
  holds) in the checkout to turn a failing `fail-on` gate green: the settings come from the
  base commit (contents API, `ref=<base sha>`), and the gate still fails — whether the gate
  is the workflow's `fail-on` input or the base commit's `fail_on`;
- a pull request run on `pull_request_target` (write token, secrets): `test-command` is
  refused before anything runs, and SynthesisRTC (which runs the repository's tests) is left
  out with a note in the log and the job summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bot.test_action import EVENT, TOKEN, pr_github, read_outputs  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import RoundTrips, ScriptedLLM, varied

HOSTILE_CONFIG = 'ignore: ["*"]\nfail_on: "total.errors>99"\n'


def event() -> dict[str, dict[str, dict[str, str]]]:
    return dict(json.loads(EVENT.read_text(encoding="utf-8")))


def action(gh: FakeGitHub, llm: ScriptedLLM, tmp_path: Path, *, event_name: str = "pull_request",
           **inputs: str) -> subprocess.CompletedProcess[str]:
    """`rtcbot action` on the event's PR, in a checkout at its head that holds the pull
    request's own `.github/rtcbot.yml`."""
    workspace = tmp_path / "workspace"
    (workspace / ".github").mkdir(parents=True, exist_ok=True)
    (workspace / ".github" / "rtcbot.yml").write_text(HOSTILE_CONFIG)
    (workspace / ".git").mkdir(exist_ok=True)
    (workspace / ".git" / "HEAD").write_text(event()["pull_request"]["head"]["sha"] + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RTCBOT_LLM"))}
    env.update({
        "GITHUB_EVENT_PATH": str(EVENT), "GITHUB_EVENT_NAME": event_name,
        "GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": TOKEN, "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "INPUT_LLM-BASE-URL": llm.base_url, "INPUT_MODEL": llm.model,
    })
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return subprocess.run([sys.executable, "-m", "bot", "action"], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=400, check=False)


@pytest.mark.slow
@pytest.mark.parametrize("gate_from", ["input", "base config"])
def test_a_pull_requests_own_config_cannot_turn_the_gate_green(
        gate_from: str, pr_github: Callable[..., FakeGitHub],  # noqa: F811
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh = pr_github()
    base_sha = event()["pull_request"]["base"]["sha"]
    inputs = {"analyzers": "editing-rtc"}
    if gate_from == "input":
        inputs["fail_on"] = "total.findings>0"
    else:  # the admins' file on the base commit (the PR's head has no such file in the API)
        gh.set_file(".github/rtcbot.yml", "fail_on: total.findings>0\n", ref=base_sha)
    proc = action(gh, scripted_llm(RoundTrips()), tmp_path, **inputs)  # conclusive hunks: findings the gate counts
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "fail-on matched: total.findings>0" in proc.stderr
    reads = [r for r in gh.requests if r.method == "GET" and "/contents/" in r.path]
    config = [r for r in reads if r.path.endswith("/contents/.github/rtcbot.yml")]
    assert len(config) == 1 and f"ref={base_sha}" in config[0].target, config  # the config: once, at the base
    dismissals = [r for r in reads if r.path.endswith("/contents/.github/rtcbot-dismissals.yml")]
    assert len(dismissals) == 1 and f"ref={base_sha}" in dismissals[0].target, dismissals  # at the base too
    record = [r for r in reads if r.path.endswith("/contents/.rtcbot/qualification.json")]
    assert len(record) == 1 and f"ref={base_sha}" in record[0].target, record  # the qualification record too
    head_sha = event()["pull_request"]["head"]["sha"]
    for r in reads[:]:  # anything else read is a file at the head (EditingRTC names its hunks from it)
        if r not in (config[0], dismissals[0], record[0]):
            assert f"ref={head_sha}" in r.target and not r.path.endswith(("rtcbot.yml", "rtcbot-dismissals.yml",
                                                                          "qualification.json")), r
    said = ("settings from .github/rtcbot.yml" if gate_from == "base config" else "no .github/rtcbot.yml")
    assert f"{said} at the base commit {base_sha[:12]}" in proc.stderr
    (run,) = gh.check_runs.values()
    assert run["conclusion"] == "failure" and run["annotations"]  # the hunks were not ignored
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"


@pytest.mark.slow
def test_a_config_the_api_cannot_give_stops_the_run(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    """Never the defaults (an open gate) when the base commit's file cannot be read."""
    gh = pr_github()
    gh.fail_next(10, status=500, retry_after=None, match="/contents/")
    proc = action(gh, scripted_llm(varied), tmp_path, analyzers="editing-rtc", fail_on="")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "Error: GitHub answered 500: Server Error"
    assert gh.check_runs == {}


@pytest.mark.slow
def test_pull_request_target_runs_nothing_from_the_pull_request(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    gh = pr_github()
    llm = scripted_llm(varied)
    marker = tmp_path / "MARKER"
    refused = action(gh, llm, tmp_path, event_name="pull_request_target", analyzers="editing-rtc",
                     test_command=f"touch {marker}")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "Error: test-command runs the pull request's code; refusing on pull_request_target"]
    assert gh.requests == [] and llm.request_count == 0 and not marker.exists()

    proc = action(gh, llm, tmp_path, event_name="pull_request_target", analyzers="editing-rtc,synthesis-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    note = ("pull_request_target: the pull request is read as data only; nothing from it runs "
            "(no test command, no SynthesisRTC).")
    assert note in proc.stderr
    assert note in (tmp_path / "summary.md").read_text()
    assert [r["name"] for r in gh.check_runs.values()] == ["rtcbot / EditingRTC"]
