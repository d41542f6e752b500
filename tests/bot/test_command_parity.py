"""One set of command rules (bot/core/answer_command.py) on both surfaces: the same comment by the
same person with the same permission gets the same answer — result, reply and reactions — from
the App (signed deliveries through its queue, tests/bot/app_support.py) and from the Action
(`answer_comment` on the `issue_comment` event), each on its own fake GitHub set up alike."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.action.comments import answer_comment
from bot.action.settings import ActionSettings
from bot.core.settings import CommandSettings
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

TOKEN = "ghs_test_token"
PATH = "src/many.py"
Said = tuple[str, list[str], list[str]]  # the result in words, rtcbot's replies, the reactions

CASES = [  # (the comment, who writes it, their permission, the pull request's state)
    ("@rtcbot help", "Codertocat", "read", "open"),
    ("@rtcbot frobnicate the tests", "Codertocat", "read", "open"),
    ("@rtcbot ignore editing_rtc because noisy", "mallory", "triage", "open"),
    ("@rtcbot unignore editing_rtc", "ghost", None, "open"),
    ("@rtcbot rerun", "Codertocat", "read", "closed"),
    ("@rtcbot rerun", "Codertocat", "read", "open"),  # the author, whose day's budget is 0
    ("@rtcbot rerun editing-rtc", "mallory", "triage", "open"),  # neither the author nor a writer
]


def _fake(fake_github: Callable[..., FakeGitHub], login: str, permission: str | None, state: str) -> FakeGitHub:
    gh = fake_github()
    gh.grant_token(TOKEN)
    gh.add_pr(1, diff_text=many_hunks_diff(PATH, hunks=1))
    gh.permissions.pop(login, None)
    if permission is not None:
        gh.permissions[login] = permission
    gh.pulls[1].state = state
    return gh


def _said(gh: FakeGitHub, cid: int, result: str) -> Said:
    replies = [c["body"] for c in gh.issue_comments if c["user"]["login"] == "rtcbot[bot]"]
    return result, replies, gh.comment_reactions("issue", cid)


def on_the_app(a: App, body: str, login: str) -> Said:
    c = a.say(body, user=login)
    [job] = [j for j in a.rt.store.jobs.where(kind="command") if j.spec.get("comment_id") == c["id"]]
    return _said(a.gh, c["id"], (job.result or "").split(": ", 1)[1])


def on_the_action(gh: FakeGitHub, tmp_path: Path, body: str, login: str) -> Said:
    c = gh.add_issue_comment(1, body, user=login)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gh.issue_comment_event(1, c)), encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)
    log = io.StringIO()

    def no_llm() -> Any:
        raise AssertionError("no command here spends")

    answer_comment(ActionSettings(event_path=str(event), event_name="issue_comment", api_url=gh.base_url,
                                  token=TOKEN, workspace=tmp_path / "ws", llm_factory=no_llm,
                                  analyzers="editing-rtc",
                                  commands=CommandSettings(author_reruns_per_day=0, permission_cache_s=0.0)),
                   log=log, stdout=io.StringIO())
    found = re.search(r"^rtcbot: \S+ by \S+: (.*)$", log.getvalue(), re.M)
    assert found, log.getvalue()
    return _said(gh, c["id"], found.group(1))


@pytest.mark.parametrize(("body", "login", "permission", "state"), CASES)
def test_the_same_comment_gets_the_same_answer_on_the_app_and_the_action(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub], tmp_path: Path,
        body: str, login: str, permission: str | None, state: str) -> None:
    app = apps(_fake(fake_github, login, permission, state), author_reruns_per_day=0, permission_cache_s=0.0)
    on_app = on_the_app(app, body, login)
    on_action = on_the_action(_fake(fake_github, login, permission, state), tmp_path, body, login)
    if login == "mallory" and body.startswith("@rtcbot rerun"):
        # the one difference is the surface's: the Action's `explain` analyses again, so it is
        # the author's too (the reply says both verbs); the App's reads stored results
        assert on_app[1] == ["Only the pull request's author and people with write access to this repository "
                             "can `rerun`."]
        assert on_action[1] == [on_app[1][0].replace("`rerun`", "`rerun` or `explain` here")]
        on_action = (on_action[0], on_app[1], on_action[2])
    assert on_action == on_app
    assert on_app[2][0] == "eyes" and len(on_app[1]) == 1  # acknowledged, answered once
    assert app.llm.request_count == 0  # nothing was analysed for the command
