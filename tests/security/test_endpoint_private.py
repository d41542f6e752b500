"""The operator's LLM endpoint stays private (analyzers/llm/errors.py): what rtcbot publishes
names the model, never the endpoint's host, port or parameters.

Attack covered: a pull request's author (or anyone who reads a public repository) learning
where the operator's model runs. On f32233f an endpoint that failed was named in full (its
credentials redacted, but its host, port and the names of its parameters shown) in the App's
public check-run summary, the PR review, the Action's check run, step summary and log, and the
CLI's JSON, Markdown and SARIF. Now each says "the LLM endpoint" and names the model; the
endpoint, redacted, is for the operator only: the service's log and the command line's one-line
error on a terminal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers.llm.client import LLMError
from analyzers.llm.retry import describe
from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action import pr_github, run_action  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import ScriptedLLM, varied

EDITING = "rtcbot / EditingRTC"
PARAMS = ("deployment", "zq9tenant", "region", "qx7north")


def private_url(base_url: str) -> str:
    """The scripted server's address with a path it does not serve (every request fails) and
    parameters an operator's gateway might take."""
    return f"{base_url}/gw?deployment=zq9tenant&region=qx7north"


def leaks(text: str, base_url: str) -> list[str]:
    """What of the endpoint `text` shows: its host and port, its parameters' names or values."""
    host_port = base_url.split("//", 1)[1].split("/", 1)[0]  # 127.0.0.1:<port>
    port = host_port.rsplit(":", 1)[1]
    return [s for s in (host_port, f":{port}", *PARAMS) if s in text]


def written(gh: FakeGitHub) -> str:
    """Everything rtcbot wrote to GitHub (check runs and their updates, reviews, comments)."""
    return json.dumps([r.body for r in gh.requests if r.method in ("POST", "PATCH", "PUT")])


def test_errors_name_the_model_and_keep_the_endpoint_for_the_operator() -> None:
    url = "http://u:PW@gw.internal:4711/v1?deployment=zq9"
    e = describe(RuntimeError(f"POST {url}/chat/completions: reset"), url, "m7")  # its words quote the URL
    assert str(e) == "LLM request to the LLM endpoint (model 'm7') failed (RuntimeError)"
    assert e.for_operator() == (f"{e} [endpoint http://***@gw.internal:4711/v1?deployment=***]")
    assert LLMError("no endpoint here").for_operator() == "no endpoint here"


def test_the_apps_check_run_and_review_name_the_model_not_the_endpoint(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM], caplog: pytest.LogCaptureFixture) -> None:
    gh = fake_github()
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=2))
    llm = scripted_llm(varied)
    a = apps(gh, llm_base_url=private_url(llm.base_url), llm_model=llm.model)
    with caplog.at_level(logging.INFO):
        a.deliver("pull_request", gh.pr_event("opened", 1))
        a.run()
    [run] = gh.runs(EDITING)
    summary = run["output"]["summary"]
    assert run["status"] == "completed" and f"model {llm.model!r} not found at the LLM endpoint" in summary
    assert leaks(written(gh), llm.base_url) == [], written(gh)[:3000]
    assert leaks(json.dumps([r.result for r in a.rt.store.jobs.where(repo=gh.repo)]), llm.base_url) == []
    # the operator's log names it (redacted): where to look
    assert any("[endpoint http://127.0.0.1" in r.getMessage() and "deployment=***" in r.getMessage()
               for r in caplog.records)


def test_the_clis_outputs_name_the_model_not_the_endpoint(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """JSON, Markdown and SARIF are what a CI job uploads or posts."""
    llm = scripted_llm(varied)
    for fmt in ("json", "markdown", "sarif"):
        r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--format", fmt,
                                      "--llm-base-url", private_url(llm.base_url), "--model", llm.model])
        assert r.exit_code == 1, r.output[-2000:]
        assert "not found at the LLM endpoint" in r.output and leaks(r.output, llm.base_url) == [], fmt


@pytest.mark.slow
def test_the_actions_publications_and_log_name_the_model_not_the_endpoint(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    """The Action's log is the workflow's: public on a public repository."""
    gh, llm = pr_github(), scripted_llm(varied)
    proc = run_action(gh, llm, tmp_path, llm_base_url=private_url(llm.base_url), analyzers="editing-rtc",
                      sarif_file="out/rtcbot.sarif")
    [run] = gh.check_runs.values()
    assert run["status"] == "completed" and "the LLM endpoint" in json.dumps(run["output"]), proc.stderr[-2000:]
    texts = {"GitHub": written(gh), "the log": proc.stdout + proc.stderr}
    texts.update({name: (tmp_path / name).read_text(encoding="utf-8")
                  for name in ("summary.md", "output.txt", "workspace/out/rtcbot.sarif")})
    for where, text in texts.items():
        assert leaks(text, llm.base_url) == [], (where, text[:2000])

