"""The Action's daily limit on the pull request author's `rerun` and `explain`
(RTCBOT_AUTHOR_RERUNS_PER_DAY) counts what the author cannot edit away: rtcbot's own replies,
each naming the author's id (bot/action/charges.py). Played by the author (no write access)
through real `rtcbot action` processes on `issue_comment` events against the fake GitHub.

Attack covered: on b3e8eed the limit counted the author's own command comments in the
conversation; editing an earlier `@rtcbot rerun` into anything else, or deleting it, gave the
day back, so an author could re-run without end (each re-run a job's LLM budget)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.action.charges import MARKER
from bot.core import pr_commands
from tests.bot.test_action_comments import EDITING, _github, command, replies
from tests.fakes.github_server import FakeGitHub, user_id
from tests.fakes.llm_server import ScriptedLLM, varied

pytestmark = pytest.mark.slow
DAY = {"RTCBOT_AUTHOR_RERUNS_PER_DAY": "2"}


def completions(gh: FakeGitHub) -> int:
    return sum(1 for r in gh.runs(EDITING) for u in r["updates"] if u.get("status") == "completed")


def test_editing_or_deleting_the_rerun_comments_does_not_give_the_day_back(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    proc, first = command(gh, llm, tmp_path, "@rtcbot rerun", **DAY)  # Codertocat: the author, read access
    assert proc.returncode == 0, proc.stderr[-3000:]
    first.update(body="Never mind.", updated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))  # edited
    proc, second = command(gh, llm, tmp_path, "@rtcbot rerun", **DAY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with gh._lock:
        gh.issue_comments.remove(second)  # deleted
    assert completions(gh) == 2
    # the author's own comment carrying rtcbot's marker counts for nothing either way
    gh.add_issue_comment(1, MARKER.format(author_id=user_id("Codertocat")), user="Codertocat")
    spent = llm.request_count
    proc, _ = command(gh, llm, tmp_path, "@rtcbot rerun", **DAY)  # a third today: refused
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert replies(gh)[-1:] == [pr_commands.author_budget_reply(2)], completions(gh)
    receipts = [r for r in replies(gh) if MARKER.format(author_id=user_id("Codertocat")) in r]
    assert len(receipts) == 2 and "1 of the 2" in receipts[0] and "2 of the 2" in receipts[1]
    proc, _ = command(gh, llm, tmp_path, "@rtcbot explain src/many.py:2", **DAY)  # explain costs the same
    assert replies(gh)[-1:] == [pr_commands.author_budget_reply(2)], completions(gh)
    assert completions(gh) == 2 and llm.request_count == spent
    gh.permissions["carol"] = "write"  # someone with write access may still ask, uncounted
    proc, _ = command(gh, llm, tmp_path, "@rtcbot rerun", user="carol", **DAY)
    assert proc.returncode == 0 and completions(gh) == 3
