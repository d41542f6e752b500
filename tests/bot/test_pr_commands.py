"""Commands on a pull request: the parser (bot/core/pr_commands.py) and the routing of comments
to command jobs (bot/app/command_events.py), on GitHub's example payloads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.app import events
from bot.app.command_events import CommandJob, may_address
from bot.core import pr_commands
from bot.core.pr_commands import Dismissals, Explain, Help, Ignore, Malformed, Rerun, Unignore, addressed, parse
from bot.core.verbs.table import VERBS
from tests.support import FIXTURES

HOOKS = FIXTURES / "github" / "webhooks"


def test_only_the_first_addressed_line_outside_code_and_quotes_counts() -> None:
    assert addressed("@rtcbot help", "rtcbot") == "help"
    assert addressed("thanks!\n@RTCBot[bot]   rerun  editing-rtc\n@rtcbot help", "rtcbot") == "rerun  editing-rtc"
    assert addressed("@rtcbot", "rtcbot") == ""
    assert addressed("> @rtcbot ignore x\n```\n@rtcbot ignore y\n```", "rtcbot") is None
    assert addressed("ask @rtcbot help", "rtcbot") is None  # a mention in a sentence is not a command
    assert addressed("@rtcbotx help", "rtcbot") is None and addressed("@other help", "rtcbot") is None
    assert addressed(None, "rtcbot") is None
    assert len(addressed("@rtcbot " + "x" * 5000, "rtcbot") or "") == pr_commands.MAX_LINE


@pytest.mark.parametrize(("text", "command"), [
    ("", Help()), ("help", Help()), ("HELP", Help()),
    ("rerun", Rerun()), ("rerun editing-rtc, crscore crscore", Rerun(("editing_rtc", "crscore"))),
    ("explain", Explain()), ("explain src/a b.py:12", Explain("src/a b.py", 12)),
    ("ignore this", Ignore("this")),
    ("ignore THIS in src/** because noisy  here", Ignore("this", "src/**", "noisy here")),
    ("ignore python.lang.security.audit.eval-detected in tests/*.py", Ignore("python.lang.security.audit.eval-detected",
                                                                             "tests/*.py")),
    ("unignore 0123456789abcdef", Unignore("0123456789abcdef")),
    ("unignore autofix in a/*", Unignore("autofix", "a/*")),
    ("dismissals", Dismissals()),
])
def test_commands_parse(text: str, command: pr_commands.Command) -> None:
    assert parse(text) == command


@pytest.mark.parametrize(("text", "why"), [
    ("frobnicate", "unknown command 'frobnicate'"), ("help me", "help takes nothing"),
    ("rerun $(rm -rf /)", "unknown analyzer"), ("rerun nope", "unknown analyzer 'nope'"),
    ("explain ../../etc/passwd:1", "inside the repository"), ("explain /etc/passwd:1", "inside the repository"),
    ("explain src/a.py", "path:line"), ("explain src/a.py:0", "path:line"), ("explain a\\b.py:3", "inside"),
    ("ignore", "takes <rule|this>"), ("ignore x in ../secrets", "inside the repository"),
    ("ignore x in /etc/*", "inside the repository"), ("ignore `x`", "a rule id"),
    ("ignore x because " + "y" * 400, "longer than 300"), ("unignore x because y", "takes <rule|this>"),
    ("dismissals all", "takes nothing"),
])
def test_malformed_commands_say_why(text: str, why: str) -> None:
    command = parse(text)
    assert isinstance(command, Malformed) and why in command.why, command


def test_safe_paths_stay_in_the_repository() -> None:
    assert pr_commands.safe_path("src/app.py") == "src/app.py"
    assert pr_commands.safe_path("src/**/*.py", glob=True) == "src/**/*.py"
    for bad in ("", "/abs", "a/../b", "./a", "a//b", "~/x", "a\x00b", "a\nb", "x" * 301):
        assert pr_commands.safe_path(bad) is None and pr_commands.safe_path(bad, glob=True) is None, bad
    assert pr_commands.safe_path("src/*.py") is None  # a path names one file, never a glob


def test_help_lists_every_command_and_only_ignore_and_unignore_change_state() -> None:
    text = pr_commands.help_text("rtcbot")
    for verb in ("rerun", "explain", "ignore", "unignore", "dismissals", "help"):
        assert f"@rtcbot {verb}" in text
    assert [name for name, verb in VERBS.items() if verb.needs_write] == ["ignore", "unignore"]


# -- routing ----------------------------------------------------------------------------------
def issue_comment(body: str, *, on_pr: bool = True, action: str = "created", user_type: str = "User",
                  login: str = "Codertocat", state: str = "open") -> dict[str, Any]:
    p = dict(json.loads((HOOKS / "issue_comment" / "created.payload.json").read_text()))
    p.update(action=action, installation={"id": 7})
    p["comment"] = {**p["comment"], "body": body, "user": {**p["comment"]["user"], "login": login, "type": user_type}}
    p["issue"] = {**p["issue"], "state": state}
    if on_pr:
        p["issue"]["pull_request"] = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
    return p


def review_comment(body: str, reply_to: int | None = None) -> dict[str, Any]:
    p = dict(json.loads((HOOKS / "pull_request_review_comment" / "created.payload.json").read_text()))
    p["installation"] = {"id": 7}
    p["comment"] = {**p["comment"], "body": body, "in_reply_to_id": reply_to}
    return p


def test_a_conversation_comment_addressed_to_the_app_is_one_command_job() -> None:
    p = issue_comment("@rtcbot rerun crscore")
    assert may_address("issue_comment", p)
    [job] = events.route("issue_comment", p, slug="rtcbot").jobs
    assert isinstance(job, CommandJob)
    assert (job.source, job.pr_number, job.comment_id, job.author, job.text, job.verb, job.thread, job.state) == (
        "issue", 1, p["comment"]["id"], "Codertocat", "rerun crscore", "rerun", None, "open")
    assert job.once == f"comment:issue_comment:{p['comment']['id']}"
    assert events.from_spec(events.to_spec(job)) == job  # stored and read back
    assert job.command == Rerun(("crscore",))


def test_a_review_comment_command_replies_in_its_thread_and_is_not_scored() -> None:
    p = review_comment("@rtcbot explain", reply_to=55)
    [job] = events.route("pull_request_review_comment", p, slug="rtcbot").jobs
    assert isinstance(job, CommandJob) and job.source == "review" and job.thread == 55
    assert job.head_sha == p["pull_request"]["head"]["sha"]
    plain = events.route("pull_request_review_comment", review_comment("nice"), slug="rtcbot").jobs
    assert [j.kind for j in plain] == ["analyze"]  # an ordinary review comment is scored as before


@pytest.mark.parametrize(("payload", "note"), [
    (issue_comment("@rtcbot help", user_type="Bot"), "a bot's comment is never a command"),
    (issue_comment("@rtcbot help", login="dependabot[bot]"), "a bot's comment is never a command"),
    (issue_comment("@rtcbot help", action="edited"), "an edit never runs one again"),
    (issue_comment("@rtcbot help", on_pr=False), "not on a pull request"),
    (issue_comment("@someone help"), "not addressed to the App"),
])
def test_comments_that_are_not_commands_make_no_job(payload: dict[str, Any], note: str) -> None:
    routed = events.route("issue_comment", payload, slug="rtcbot")
    assert routed.jobs == [] and note in routed.note, routed.note


def test_a_command_on_a_closed_pull_request_still_gets_its_answer() -> None:
    [job] = events.route("issue_comment", issue_comment("@rtcbot help", state="closed"), slug="rtcbot").jobs
    assert isinstance(job, CommandJob) and job.state == "closed"
