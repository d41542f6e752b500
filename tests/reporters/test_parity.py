"""One check-run renderer: the App and the Action, run on the same pull request against the
fake GitHub (each its own, recording every request), send the same check-run request bodies.

The App path is the real one: a signed `pull_request` delivery over HTTP to the Flask app, the
job on the SQLite queue, run as a worker's thread runs it (claimed from the store). The Action
path is `rtcbot action` as a subprocess, as in its container. Both get the same pull request (files and head SHA), the
same `.github/rtcbot.yml` (on the default branch for the App, at the base commit for the
Action) and the same scripted LLM. Only ids and times may differ (`started_at`,
`completed_at`; the check run's id is in the URL, not the body).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.app_support import deliver, drain, make_settings, serve
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import RoundTrips, ScriptedLLM
from tests.support import ROOT

NUMBER = 7
FIXTURE = "more-itertools-d992be0de9.diff"
TOKEN = "ghs_parity_token"
TIMES = ("started_at", "completed_at")


def _bodies(gh: FakeGitHub) -> list[dict[str, Any]]:
    """The check-run request bodies, in order, without their times."""
    out = []
    for r in gh.writes():
        assert r.status < 400, (r.method, r.path, r.status, r.body)
        out.append({k: v for k, v in (r.body or {}).items() if k not in TIMES})
    return out


def _app(tmp_path: Path, gh: FakeGitHub, llm: ScriptedLLM) -> list[dict[str, Any]]:
    settings = make_settings(tmp_path / "app", gh, llm, analyzers=["editing_rtc"])
    rt = Runtime(settings)
    try:
        with serve(create_app(settings, runtime=rt)) as url:
            r = deliver(url, "pull_request", gh.pr_event("opened", NUMBER))
            assert r.status_code in (200, 202), r.text
            drain(rt)
    finally:
        rt.store.close()
    return _bodies(gh)


def _action(tmp_path: Path, gh: FakeGitHub, llm: ScriptedLLM) -> list[dict[str, Any]]:
    work = tmp_path / "action"
    (work / "workspace").mkdir(parents=True)
    event = work / "event.json"
    event.write_text(json.dumps(gh.pr_event("opened", NUMBER)), encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "INPUT_", "RTCBOT_"))
            or k == "RTCBOT_CACHE_DIR"}  # the test's own LLM cache
    env.update({
        "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": TOKEN, "GITHUB_WORKSPACE": str(work / "workspace"),
        "GITHUB_STEP_SUMMARY": str(work / "summary.md"), "GITHUB_OUTPUT": str(work / "output.txt"),
        "INPUT_LLM-BASE-URL": llm.base_url, "INPUT_MODEL": llm.model, "INPUT_ANALYZERS": "editing-rtc",
        "RTCBOT_CACHE_DIR": str(work / "cache"),  # a fresh LLM cache, as the App's fresh store
    })
    proc = subprocess.run([sys.executable, "-m", "bot", "action"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return _bodies(gh)


@pytest.mark.parametrize("config", [None, 'analyzers: [editing_rtc]\nfail_on: "editing_rtc.rtc<0.6"\n'],
                         ids=["defaults", "gate-holds"])
@pytest.mark.slow
def test_app_and_action_send_identical_check_runs(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM], config: str | None) -> None:
    llm = scripted_llm(RoundTrips())  # passes every baseline; re-creates the 2 hunks of 6 added lines, not the 2 of 14
    app_gh, action_gh = fake_github(), fake_github()
    for gh in (app_gh, action_gh):
        gh.add_pr(NUMBER, fixture=FIXTURE)
    action_gh.grant_token(TOKEN)
    if config is not None:
        app_gh.set_file(".github/rtcbot.yml", config)  # the default branch
        base = action_gh.pr_event("opened", NUMBER)["pull_request"]["base"]["sha"]
        action_gh.set_file(".github/rtcbot.yml", config, ref=base)  # the base commit

    app, action = _app(tmp_path, app_gh, llm), _action(tmp_path, action_gh, llm)

    assert [b.get("name") for b in app if "name" in b] == ["rtcbot / EditingRTC"]
    assert app[0]["external_id"] == f"{NUMBER}:editing_rtc" and app[0]["status"] == "in_progress"
    final = app[-1]
    assert final["conclusion"] == ("neutral" if config is None else "failure")
    assert [a["identifier"] for a in final["actions"]] == ["rerun"]
    assert final["output"]["annotations"], "the hunks are annotated"
    if config is not None:
        assert "**Threshold crossed:** editing_rtc.rtc<0.6" in final["output"]["summary"]
    # the point: byte for byte the same requests (title, summary, text, annotations, actions)
    assert json.dumps(action, sort_keys=True) == json.dumps(app, sort_keys=True)
