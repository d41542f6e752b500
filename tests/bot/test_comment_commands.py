"""Commands on a pull request, end to end: signed `issue_comment` and `pull_request_review_comment`
deliveries over real HTTP → the real queue → a command job → reactions, replies and re-runs on
the fake GitHub, every request held to GitHub's OpenAPI description (the fixture fails a test
whose bot sent one the description rejects)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.core import pr_commands
from bot.core.pr_commands import Ignore
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import varied
from tests.security.markdown_audit import audit
from tests.security.test_untrusted_surfaces import hostile
from tests.security.test_untrusted_text import HOST

EDITING = "rtcbot / EditingRTC"
PATH = "src/many.py"


@pytest.fixture
def app(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> Callable[..., App]:
    """`app(responder=varied, **settings)`: the App on one fake GitHub with pull request 1 (a
    one-hunk edit of src/many.py by Codertocat), analysed once."""

    def make(responder: Any = varied, **kw: Any) -> App:
        gh = fake_github()
        gh.add_pr(1, diff_text=many_hunks_diff(PATH, hunks=1))
        a = apps(gh, responder=responder, **kw)
        a.deliver("pull_request", gh.pr_event("opened", 1))
        a.run()
        return a

    return make


def repo_id(gh: FakeGitHub) -> int | None:
    """The repository's GitHub id where the fake gives one (the dismissals are keyed by it)."""
    value = getattr(gh, "repository_id", None)
    return value if isinstance(value, int) else None


def completions(gh: FakeGitHub) -> int:
    return sum(1 for r in gh.runs(EDITING) for u in r["updates"] if u.get("status") == "completed")


def test_help_is_acknowledged_with_eyes_and_answered_once(app: Callable[..., App]) -> None:
    a = app()
    c = a.say("Thanks! @rtcbot is new here.\n@rtcbot help")
    assert a.gh.comment_reactions("issue", c["id"]) == ["eyes"]
    [reply] = a.replies()
    assert "@rtcbot rerun" in reply and "@rtcbot explain" in reply and "@rtcbot ignore" in reply
    # the same comment delivered again (another delivery id): it ran once, by its id
    a.deliver("issue_comment", a.gh.issue_comment_event(1, c))
    assert a.run() == 0 and len(a.replies()) == 1
    assert len(a.rt.store.jobs.where(kind="command")) == 1


def test_an_edited_comment_and_a_bots_comment_are_never_commands(app: Callable[..., App]) -> None:
    a = app()
    c = a.gh.add_issue_comment(1, "@rtcbot rerun")
    r = a.deliver("issue_comment", a.gh.issue_comment_event(1, c, action="edited"))
    assert "an edit never runs one again" in r.json()["message"]
    r = a.deliver("issue_comment", a.gh.issue_comment_event(1, a.gh.add_issue_comment(
        1, "@rtcbot rerun", user="renovate[bot]", user_type="Bot")))
    assert "a bot's comment is never a command" in r.json()["message"]
    assert a.run() == 0 and a.rt.store.jobs.where(kind="command") == [] and a.replies() == []


def test_a_malformed_command_gets_the_help_text(app: Callable[..., App]) -> None:
    a = app()
    c = a.say("@rtcbot explain ../../etc/passwd:1")
    [reply] = a.replies()
    assert reply.startswith("rtcbot could not read that command: explain: the path must be relative")
    assert "@rtcbot rerun" in reply  # the help text follows
    assert a.gh.comment_reactions("issue", c["id"]) == ["eyes", "confused"]


def test_a_command_on_a_closed_pull_request_gets_a_short_reply(app: Callable[..., App]) -> None:
    a = app()
    a.gh.pulls[1].state = "closed"
    a.say("@rtcbot rerun")
    assert a.replies() == ["This pull request is closed: rtcbot takes no commands on it."]
    assert completions(a.gh) == 1


def test_the_author_reruns_the_head_debounced_and_within_a_budget(app: Callable[..., App]) -> None:
    a = app(author_reruns_per_day=2, force_debounce_s=0.0, permission_cache_s=0.0)
    c = a.say("@rtcbot rerun")
    assert a.gh.comment_reactions("issue", c["id"]) == ["eyes", "+1"] and a.replies() == []
    assert completions(a.gh) == 2  # the head analysed again, through the queue
    a.say("@rtcbot rerun editing-rtc")
    assert completions(a.gh) == 3
    a.say("@rtcbot rerun")  # the author's third today: past the budget
    [reply] = a.replies()
    assert "can ask for 2 re-run(s) a day here" in reply and completions(a.gh) == 3
    a.gh.permissions["Codertocat"] = "maintain"  # write access: no budget
    a.say("@rtcbot rerun")
    assert completions(a.gh) == 4


def test_a_rerun_within_the_debounce_window_is_not_made_again(app: Callable[..., App]) -> None:
    a = app(force_debounce_s=600.0)
    a.say("@rtcbot rerun")
    a.say("@rtcbot rerun")
    assert completions(a.gh) == 2
    assert a.replies()[-1].startswith("The same analysis is already queued, or was re-run less than 600 s ago")


def test_someone_without_write_access_cannot_rerun_or_ignore(app: Callable[..., App]) -> None:
    a = app()
    a.gh.permissions["mallory"] = "triage"
    a.say("@rtcbot rerun", user="mallory")
    a.say("@rtcbot ignore editing_rtc because noisy", user="mallory")
    assert a.replies() == [
        "Only the pull request's author and people with write access to this repository can `rerun`.",
        "Only people with write access to this repository can use `ignore`."]
    assert completions(a.gh) == 1 and a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo) == []
    a.say("@rtcbot ignore editing_rtc", user="ghost")  # a user GitHub does not know has none
    assert a.replies()[-1] == "Only people with write access to this repository can use `ignore`."


def test_ignore_unignore_and_dismissals_call_the_dismissals_store(app: Callable[..., App]) -> None:
    a = app()
    a.gh.permissions["carol"] = "write"
    c = a.say("@rtcbot ignore editing_rtc in src/** because the model is too small here", user="carol")
    assert a.gh.comment_reactions("issue", c["id"]) == ["eyes", "+1"]
    [d] = a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo)
    assert (d.target, d.kind, d.path_glob, d.by, d.reason) == (
        "editing_rtc", "rule", "src/**", "carol", "the model is too small here")
    a.say("@rtcbot dismissals")  # reading them needs no write access
    assert "`editing_rtc` (rule): dismissed by @\u2060carol" in a.replies()[-1]
    a.say("@rtcbot unignore editing_rtc in src/**", user="carol")
    assert a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo) == []
    a.say("@rtcbot dismissals")
    assert a.replies()[-1] == "Nothing is dismissed in this repository."


def test_explain_a_low_editing_rtc_score_shows_the_regenerated_code_against_the_real_edit_inert(
        app: Callable[..., App]) -> None:
    a = app(responder=hostile)
    [run] = a.gh.runs(EDITING)
    # its regenerations keep none of the unchanged lines, the baseline's neither: the hunk is
    # inconclusive, so it is not annotated, and `explain` still shows what the model did
    assert run["annotations"] == [] and "inconclusive" in run["output"]["title"]
    a.say(f"@rtcbot explain {PATH}:2")
    [reply] = a.replies()
    assert reply.startswith(f"**Why EditingRTC scored this** at `{PATH}:2`")
    assert "### The regenerated code against the real edit" in reply
    assert "-    return x * 0" in reply  # the real edit's line, missing from the regenerated code
    assert "+[r]: https://evil.example/ref" in reply  # the model's text, as code in the diff
    assert "uninformative baseline" in reply and "### The evidence" in reply
    found = audit(reply, HOST)
    assert found.clean, found
    assert "@\u2060octo-org/security-team" in reply  # the descriptions are shown, defused


def test_explain_where_there_is_no_score_or_no_place_says_so(app: Callable[..., App]) -> None:
    a = app()
    a.say(f"@rtcbot explain {PATH}:999")
    a.say("@rtcbot explain")
    head = a.gh.pulls[1].head_sha[:12]
    assert a.replies() == [f"rtcbot has no score at `{PATH}:999` at the head `{head}`.",
                           "`explain` needs `path:line` here, or write it in the thread of one of rtcbot's "
                           "comments."]


def test_a_command_in_a_review_thread_is_answered_in_that_thread(app: Callable[..., App]) -> None:
    a = app()
    top = a.gh.add_comment(1, PATH, 2, "Why multiply here?", user="bob")
    reply = a.gh.reply_in_thread(1, top, "@rtcbot help")
    a.deliver("pull_request_review_comment", a.gh.review_comment_event(1, reply))
    a.run()
    answers = [c for c in a.gh.pulls[1].comments if c["user"]["login"] == "rtcbot[bot]"]
    assert [c.get("in_reply_to_id") for c in answers] == [top["id"]]  # the thread's first comment
    assert "@rtcbot rerun" in answers[0]["body"]
    assert a.gh.comment_reactions("review", reply["id"]) == ["eyes"]


def test_a_rerun_of_an_analyzer_the_config_turns_off_says_so(app: Callable[..., App]) -> None:
    a = app(force_debounce_s=0.0)
    a.gh.set_file(".github/rtcbot.yml", "analyzers: {editing_rtc: true, autofix: false}\n")
    c = a.say("@rtcbot rerun autofix")
    assert a.replies() == ["`autofix` is turned off in `.github/rtcbot.yml`, so rtcbot does not re-run it; "
                           "turn it on there (on the default branch) first."]
    assert a.gh.comment_reactions("issue", c["id"]) == ["eyes"] and completions(a.gh) == 1
    a.say("@rtcbot rerun autofix editing-rtc")  # the one that is on runs; the reply says the other is off
    assert completions(a.gh) == 2 and a.replies()[-1].startswith("`autofix` is turned off")


def _finding_thread(a: App, reply: str, user: str = "Codertocat") -> tuple[dict[str, Any], dict[str, Any]]:
    """One of rtcbot's review comments (with its marker) on the pull request, and `user`'s reply."""
    top = a.gh.add_comment(1, PATH, 2, "EditingRTC 0.00 here.\n\n<!-- rtcbot:suggestion:0123abcd -->",
                           user="rtcbot[bot]", user_type="Bot")
    return top, a.gh.reply_in_thread(1, top, reply, user=user)


def _answers(a: App, top: dict[str, Any]) -> list[str]:
    return [c["body"] for c in a.gh.pulls[1].comments
            if c["user"]["login"] == "rtcbot[bot]" and c.get("in_reply_to_id") == top["id"]]


def test_a_wont_fix_thread_proposes_the_ignore_command_once_and_dismisses_nothing(app: Callable[..., App]) -> None:
    a = app()
    top, reply = _finding_thread(a, "> EditingRTC 0.00\n\nWon't fix: the multiplication by one is intended @octo-org/x")
    a.deliver("pull_request_review_thread", a.gh.thread_event(1, [top, reply]))
    a.run()
    [proposal] = _answers(a, top)
    command = "@rtcbot ignore this because Won't fix: the multiplication by one is intended @octo-org/x"
    assert f"`{command}`" in proposal and "dismisses nothing by itself" in proposal
    assert audit(proposal, HOST).clean  # the reply's words only in a code span: no live mention
    assert pr_commands.parse(pr_commands.addressed(command, "rtcbot") or "") == Ignore(
        "this", None, "Won't fix: the multiplication by one is intended @octo-org/x")
    assert a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo) == []  # proposed, never made
    # unresolved and resolved again, delivered again: proposed once per thread, ever
    a.deliver("pull_request_review_thread", a.gh.thread_event(1, [top, reply], action="unresolved"))
    a.deliver("pull_request_review_thread", a.gh.thread_event(1, [top, reply]))
    a.run()
    assert len(_answers(a, top)) == 1 and len(a.rt.store.jobs.where(kind="proposal")) == 1


@pytest.mark.parametrize(("top_user", "reply", "reply_user", "note"), [
    ("rtcbot[bot]", "Good point, fixed.", "Codertocat", "resolved without a \"won't fix\" reply"),
    ("rtcbot[bot]", "False positive.", "renovate[bot]", "resolved without a \"won't fix\" reply"),
    ("bob", "Not a bug.", "Codertocat", "not a thread on one of the App's findings"),
    ("other-app[bot]", "Not a bug.", "Codertocat", ""),  # another App's marker: its job says no
])
def test_no_proposal_without_a_persons_wont_fix_on_rtcbots_finding(
        app: Callable[..., App], top_user: str, reply: str, reply_user: str, note: str) -> None:
    a = app()
    top = a.gh.add_comment(1, PATH, 2, "x <!-- rtcbot:suggestion:0123abcd -->", user=top_user,
                           user_type="Bot" if top_user.endswith("[bot]") else "User")
    answer = a.gh.reply_in_thread(1, top, reply, user=reply_user)
    if reply_user.endswith("[bot]"):
        answer["user"]["type"] = "Bot"
    r = a.deliver("pull_request_review_thread", a.gh.thread_event(1, [top, answer]))
    assert note in r.json()["message"]
    a.run()
    assert _answers(a, top) == [] and a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo) == []
    if not note:
        [job] = a.rt.store.jobs.where(kind="proposal")
        assert job.result == "proposal: the thread is not on one of this App's comments"
