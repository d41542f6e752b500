"""Dismissals apply on every path that runs an analysis: a push, a re-run of a check run and a
command's re-run, end to end through the App (signed deliveries over real HTTP → the queue →
check runs on the fake GitHub, the scripted LLM).

Attack covered: the pull request's author undoing the team's dismissals. A maintainer dismisses
a rule; on b3e8eed the author's `@rtcbot rerun` made a job without the repository's id, whose
lookup found none of the dismissals recorded under it: the dismissed findings came back as
annotations and the gate that reads them failed the check run again."""

from __future__ import annotations

from collections.abc import Callable

from tests.bot.app_support import App
from tests.bot.test_jobs import responder
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

EDITING = "rtcbot / EditingRTC"
GATE = "fail_on: editing_rtc.findings>0\n"


def test_a_rerun_command_applies_the_repositorys_dismissals(apps: Callable[..., App],
                                                            fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.set_file(".github/rtcbot.yml", GATE)
    gh.permissions["carol"] = "write"
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=2))
    a = apps(gh, responder=responder, force_debounce_s=0.0, permission_cache_s=0.0)
    a.deliver("pull_request", gh.pr_event("opened", 1))
    a.run()
    [run] = gh.runs(EDITING)
    assert run["conclusion"] == "failure" and len(run["annotations"]) == 2  # the gate reads the findings
    a.say("@rtcbot ignore editing_rtc because the model is too small for this repository", user="carol")
    assert a.rt.store.dismissals.listed(gh.repository_id, gh.repo)
    a.say("@rtcbot rerun", user="Codertocat")  # the author's re-run
    [run] = gh.runs(EDITING)
    last = run["updates"][-1]
    assert last["conclusion"] == "neutral", last["output"]["summary"][:2000]
    assert last["output"].get("annotations", []) == [] and len(run["annotations"]) == 2  # none added
    assert "### Dismissed" in last["output"]["summary"]
    assert "dismissed by @\u2060carol" in last["output"]["summary"]
    a.say("@rtcbot rerun editing-rtc", user="Codertocat")  # one analysis, by name: the same
    last = gh.runs(EDITING)[0]["updates"][-1]
    assert last["conclusion"] == "neutral" and "### Dismissed" in last["output"]["summary"]
