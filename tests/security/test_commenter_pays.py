"""Whoever asks, pays (bot/app/budget.py `Payer.commenter`): a review, or a review comment,
makes the App score the pull request's comments again (CRScore, forced), and that work is
charged to whoever wrote it, through the App with the fake GitHub.

Attack covered: a stranger spending the pull request's author's day. On f32233f each review
comment a stranger wrote (and each edit of one) re-ran CRScore charged to the pull request's
author and the pull request's day, so comments alone could use up the author's budget and cut
their next push's analyses off. Now it is charged to the commenter (and the installation's
day, never the author's or the pull request's); a commenter with nothing left of their day
gets nothing run: the job ends "skipped", its note naming the commenter's budget, and the
check run is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.app.budget import ASKED, Payer, payer_of
from bot.app.events import AnalyzeJob, route
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff, user_id

CRSCORE = "rtcbot / CRScore"
DAY = 40  # requests: a commenter's (and the author's) daily budget


def comment(a: App, user: str, body: str, action: str = "created") -> dict[str, Any]:
    """`user` writes a review comment on pull request 1 (the delivery GitHub sends, its sender
    the commenter)."""
    c = a.gh.add_comment(1, "src/many.py", 13, body, user=user)
    event = a.gh.review_comment_event(1, c, action=action)
    event["sender"] = {"login": user, "id": user_id(user), "type": "User"}
    return event


def test_a_review_comment_is_charged_to_its_commenter(fake_github: Callable[..., FakeGitHub]) -> None:
    """The routed job's payer, for a comment written, edited and a review submitted."""
    gh = fake_github()
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=2), author="mallory")
    c = gh.add_comment(1, "src/many.py", 13, "Why?", user="eve")
    for event, payload in (("pull_request_review_comment", gh.review_comment_event(1, c)),
                           ("pull_request_review_comment", gh.review_comment_event(1, c, action="edited"))):
        payload["sender"] = {"login": "eve", "id": user_id("eve")}
        [job] = route(event, payload).jobs
        assert isinstance(job, AnalyzeJob) and job.analyzer == "crscore"
        # the commenter's day and the installation's: not the pull request's nor its author's
        assert payer_of(job) == Payer(gh.installation_id, author=f"author:{user_id('eve')}", asked=True)


def mallorys_pull_request(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> App:
    """The App, with mallory's pull request 1 open (nothing analysed yet)."""
    gh = fake_github()
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=2), author="mallory")
    return apps(gh, llm_author_daily_requests=DAY, force_debounce_s=0.0)


def test_a_commenter_with_no_budget_left_gets_nothing_run(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    a = mallorys_pull_request(apps, fake_github)
    gh, store, inst = a.gh, a.rt.store, a.gh.installation_id
    eve, mallory = f"author:{user_id('eve')}", f"author:{user_id('mallory')}"
    store.usage.add(inst, DAY, 1000, spenders=[eve])  # eve's day is spent (by earlier comments)
    before = a.llm.request_count
    for body in ("Is this right?", "Still asking."):
        a.deliver("pull_request_review_comment", comment(a, "eve", body))
    a.run()
    jobs = [j for j in store.jobs.where(repo=gh.repo) if j.analyzer == "crscore"]
    assert len(jobs) >= 1 and all(j.status == "skipped" for j in jobs), [(j.status, j.result) for j in jobs]
    assert all(ASKED in (j.result or "") for j in jobs), jobs[0].result
    assert a.llm.request_count == before  # nothing asked of the model
    assert gh.runs(CRSCORE) == []  # nor of GitHub: no check run made or changed
    spent = store.usage.spent_today(inst, [eve, mallory, f"pr:{gh.repository_id}#1"])
    assert spent[mallory] == (0, 0) and spent[f"pr:{gh.repository_id}#1"] == (0, 0)


@pytest.mark.model
@pytest.mark.slow
def test_a_commenters_rerun_spends_their_day_not_the_authors(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    a = mallorys_pull_request(apps, fake_github)
    gh, store, inst = a.gh, a.rt.store, a.gh.installation_id
    a.deliver("pull_request_review_comment", comment(a, "eve", "This multiplies; callers expecting a sum break."))
    a.run()
    [run] = gh.runs(CRSCORE)
    assert run["status"] == "completed"
    eve, mallory, pr = f"author:{user_id('eve')}", f"author:{user_id('mallory')}", f"pr:{gh.repository_id}#1"
    spent = store.usage.spent_today(inst, [eve, mallory, pr])
    assert spent[eve][0] > 0 and spent[mallory] == (0, 0) and spent[pr] == (0, 0), spent
    assert store.usage.today(inst)[0] == spent[eve][0]
