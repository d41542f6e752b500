"""LLM budgets per pull request and per author (bot/app/budget.py), end to end: signed
deliveries over real HTTP → the real queue → jobs → check runs on the fake GitHub, LLM requests
counted at the scripted LLM server and in the store.

Attack covered: one author spending an installation's day. A fork's pull request of 20 hunks
with the most expensive options a repository may set (EditingRTC at its maxima: 5 descriptions
a hunk, the longest answers) pushed 20 times, each push new code (no cached answer): its pull request's
daily budget stops it, its author's stops their next pull request, each cut-off is listed as
skipped in the check run naming the budget, and another author's pull request in the same
installation still runs in full.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from bot.app.budget import NOTES, Payer, payer_of
from bot.app.events import AnalyzeJob, PRJob, route
from bot.app.settings import ServiceSettings
from bot.store.store import Store
from tests.bot.app_support import App, deliver, running_app
from tests.fakes.github_server import FakeGitHub, many_hunks_diff, user_id
from tests.fakes.llm_server import ScriptedLLM, varied

EDITING = "rtcbot / EditingRTC"
MAXIMAL = """\
options:
  editing_rtc: {n_forward: 5, forward_max_tokens: 1024, backward_max_tokens: 2048, max_hunks: 100,
                max_hunk_chars: 12000}
"""
JOB, PR_DAY, AUTHOR_DAY = 30, 60, 100  # requests (each an answer read from and written to the store)
HUNKS = 20  # a push's: ~140 requests at these options, more than a job may spend
PR_CUT, AUTHOR_CUT = NOTES["pr"], NOTES["author"]
INSTALLATION_CUT = NOTES["installation"]


COSTLY_JOBS = {"llm_max_requests": JOB, "llm_concurrency": 1}  # settings: a job's budget, hunk after hunk


def costly(gh: FakeGitHub) -> FakeGitHub:
    """`gh`, whose default branch sets EditingRTC at its maxima."""
    gh.set_file(".github/rtcbot.yml", MAXIMAL)
    return gh


@pytest.fixture
def app(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> App:
    """One installation with the budgets above; its day far from spent."""
    return apps(costly(fake_github(installation_id=303, repo="octo-org/costly")), **COSTLY_JOBS,
                llm_pr_daily_requests=PR_DAY, llm_author_daily_requests=AUTHOR_DAY)


def push(app: App, number: int, k: int, **kw: Any) -> str:
    """Push new code to pull request `number` (opening it on k == 0) and run its jobs; the
    summary of its EditingRTC check run."""
    gh = app.gh
    if k == 0:
        gh.add_pr(number, diff_text=push_code(0, **kw.pop("code", {})), **kw)
    else:
        gh.push(number, diff_text=push_code(k, **kw.pop("code", {})))
    r = deliver(app.url, "pull_request", gh.pr_event("opened" if k == 0 else "synchronize", number))
    assert r.status_code == 202, r.text
    app.run()
    [run] = [r for r in gh.runs(EDITING, gh.pulls[number].head_sha) if r["status"] == "completed"]
    return str(run["output"]["summary"])


def push_code(k: int, hunks: int = HUNKS, path: str = "src/many.py", by: str = "") -> str:
    """New code on every push (and for each author): no hunk's answers are cached from an
    earlier one."""
    return many_hunks_diff(path, hunks=hunks).replace("# end", f"# {by} push {k}")


@pytest.mark.slow
def test_a_pull_requests_and_an_authors_budgets_stop_a_fork_pushing_20_times(app: App) -> None:
    store, inst = app.rt.store, app.gh.installation_id
    fork = {"head_repo": "mallory/costly", "author": "mallory"}
    summaries = [push(app, 1, 0, **fork)]
    assert app.llm.request_count == JOB  # a job's budget: the hunks need ~140 requests
    summaries += [push(app, 1, k) for k in range(1, 20)]  # 19 more pushes, each new code
    assert app.llm.request_count == PR_DAY  # two pushes' worth; none since
    assert store.usage.spent_today(inst, [f"author:{user_id('mallory')}"])[f"author:{user_id('mallory')}"][0] == PR_DAY
    assert NOTES["job"] in summaries[0] and PR_CUT not in summaries[0]
    for summary in summaries[1:]:  # every cut-off listed as skipped, naming the budget
        assert "### Not analysed" in summary and PR_CUT in summary, summary[:2000]
    # the author's next pull request gets what is left of their day, then their budget's cut-off
    theirs = [push(app, 2, 0, code={"path": "src/other.py"}, **fork)]
    theirs += [push(app, 2, k, code={"path": "src/other.py"}) for k in (1, 2)]
    assert app.llm.request_count == AUTHOR_DAY
    assert AUTHOR_CUT in theirs[1] and AUTHOR_CUT in theirs[2]
    # another author's pull request in the same installation runs in full
    spent = app.llm.request_count
    other = push(app, 3, 0, code={"hunks": 2, "by": "alice"}, author="alice")
    assert app.llm.request_count > spent and "### Not analysed" not in other
    assert store.usage.today(inst)[0] == app.llm.request_count < app.rt.settings.llm_daily_requests


@pytest.mark.slow
def test_without_them_one_pull_request_spends_the_installations_day(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """The contrast: budgets per pull request and author as large as the day, and the same
    pushes leave the installation's other pull requests nothing."""
    day = 3 * JOB  # three pushes' worth
    with running_app(tmp_path, costly(fake_github(installation_id=404, repo="octo-org/spent")), scripted_llm(varied),
                     **COSTLY_JOBS, llm_daily_requests=day, llm_pr_daily_requests=day,
                     llm_author_daily_requests=day) as a:
        for k in range(5):
            push(a, 1, k, head_repo="mallory/spent", author="mallory")
        assert a.llm.request_count == day
        other = push(a, 3, 0, code={"hunks": 2, "by": "alice"}, author="alice")
        assert a.llm.request_count == day and INSTALLATION_CUT in other


@pytest.mark.slow
def test_an_authors_rerun_commands_are_charged_to_their_pull_requests_and_their_day(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """`@rtcbot rerun` by the pull request's author (no write access) spends the same day as
    their pushes: their pull request's, then their own. On b3e8eed a command's re-run carried
    no repository id and no author: it spent from a second per-PR bucket (keyed by the name) and
    from no author's day (PR day 60, author day 100: the author spent 180)."""
    a = apps(costly(fake_github(installation_id=505, repo="octo-org/reruns")), **COSTLY_JOBS,
             llm_pr_daily_requests=PR_DAY, llm_author_daily_requests=AUTHOR_DAY,
             author_reruns_per_day=50, force_debounce_s=0.0, permission_cache_s=0.0)
    store, inst, gh = a.rt.store, a.gh.installation_id, a.gh
    fork = {"head_repo": "mallory/reruns", "author": "mallory"}
    push(a, 1, 0, **fork)
    for _ in range(4):  # each would get a job's budget of new hunks: the cache holds the others
        a.say("@rtcbot rerun", 1, user="mallory")
    assert a.llm.request_count == PR_DAY
    summary = gh.runs(EDITING, gh.pulls[1].head_sha)[-1]["output"]["summary"]
    assert PR_CUT in summary
    push(a, 2, 0, code={"path": "src/other.py"}, **fork)  # their next pull request: what is left of their day
    for _ in range(3):
        a.say("@rtcbot rerun editing-rtc", 2, user="mallory")
    assert a.llm.request_count == AUTHOR_DAY
    assert AUTHOR_CUT in gh.runs(EDITING, gh.pulls[2].head_sha)[-1]["output"]["summary"]
    author, pr1 = f"author:{user_id('mallory')}", f"pr:{gh.repository_id}#1"
    spent = store.usage.spent_today(inst, [author, pr1, f"pr:{gh.repo}#1"])
    assert {who: requests for who, (requests, _) in spent.items()} == {author: AUTHOR_DAY, pr1: PR_DAY,
                                                                      f"pr:{gh.repo}#1": 0}  # no second bucket
    assert a.replies() == []  # every re-run was made (a 👍 each), none refused


def test_the_author_comes_from_the_pull_requests_payload(fake_github: Callable[..., FakeGitHub]) -> None:
    """A fork's pushes count to its author (the pull request's user, not the pusher); a
    re-run's to whoever asked for it (the payload names no pull request author), and to the
    same pull request's day."""
    gh = fake_github()
    gh.add_pr(1, diff_text=push_code(0, hunks=1), head_repo="mallory/widgets", author="mallory")
    payload = gh.pr_event("synchronize", 1)
    payload["sender"] = {"login": "someone-else", "id": 99}
    [job] = route("pull_request", payload).jobs
    assert isinstance(job, PRJob) and job.fork and job.author_id == user_id("mallory")
    payer = payer_of(AnalyzeJob.of(job, "editing_rtc", root=1))
    assert payer is not None and payer.author == f"author:{user_id('mallory')}"
    gh.check_runs[5] = {"id": 5, "name": EDITING, "head_sha": job.head_sha, "external_id": "1:editing_rtc",
                        "status": "completed", "conclusion": "neutral"}
    event = gh.check_run_event(5)
    [rerun] = route("check_run", event).jobs
    assert isinstance(rerun, AnalyzeJob) and rerun.author_id == event["sender"]["id"]
    assert payer_of(rerun) == Payer(gh.installation_id, pr=payer.pr, author=f"author:{event['sender']['id']}")


# -- settings -------------------------------------------------------------------------------------
def test_the_budgets_per_pull_request_and_author_derive_from_the_day_and_are_bounded() -> None:
    s = ServiceSettings()
    day, pr, author = s.daily_budgets()["installation"], s.daily_budgets()["pr"], s.daily_budgets()["author"]
    assert pr == (day[0] // 4, day[1] // 4) and author == (day[0] // 2, day[1] // 2)
    assert pr[0] >= s.llm_max_requests and author[0] > pr[0]  # a pull request's analyses fit; one author's do
    small = ServiceSettings(llm_daily_requests=10).daily_budgets()
    assert small["pr"][0] == small["author"][0] == s.llm_max_requests  # never below one job's budget
    assert ServiceSettings(llm_pr_daily_requests=7).daily_budgets()["pr"][0] == 7
    for values in ({"llm_pr_daily_requests": 0}, {"llm_author_daily_tokens": -1}, {"llm_pr_daily_tokens": "lots"}):
        with pytest.raises(ValidationError):
            ServiceSettings(**values)


def test_an_authors_spending_is_counted_per_installation(tmp_path: Path) -> None:
    """An author's day in one installation says nothing of, and takes nothing from, another's."""
    store = Store(f"sqlite:///{tmp_path / 'rtcbot.sqlite3'}")
    try:
        store.usage.add(1, 40, 4000, spenders=["pr:9#1", "author:7"])
        store.usage.add(1, 2, 200, spenders=["pr:9#2", "author:7", "author:7"])  # counted once
        assert store.usage.spent_today(1, ["author:7", "pr:9#1", "pr:9#2"]) == {
            "author:7": (42, 4200), "pr:9#1": (40, 4000), "pr:9#2": (2, 200)}
        assert store.usage.spent_today(2, ["author:7"]) == {"author:7": (0, 0)}
        assert store.usage.today(1) == (42, 4200)
    finally:
        store.close()


def test_the_notes_name_each_budget_without_figures() -> None:
    assert set(NOTES) == {"job", "pr", "author", "installation"}
    assert all(not any(ch.isdigit() for ch in note.replace("00:00", "")) for note in NOTES.values())
