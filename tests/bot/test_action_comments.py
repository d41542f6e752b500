"""Commands through the Action, end to end: `rtcbot action` as a subprocess on an `issue_comment`
event (the workflow docs/workflows/rtcbot-commands.yml runs), against the fake GitHub on
loopback, every request held to GitHub's OpenAPI description (the `fake_github` fixture fails a
test whose run sent one the description rejects), and the scripted LLM: `rerun` and `explain`
run the same review and explanation code as the App; who may ask is GitHub's collaborator
permission, asked with the workflow's token; a bot's comment is never a command; `ignore`
answers with the entry to commit in `.github/rtcbot-dismissals.yml`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.action.charges import receipt
from bot.core import pr_commands
from bot.core.dismissals_file import parse_dismissals
from tests.fakes.github_server import FakeGitHub, many_hunks_diff, user_id
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.security.markdown_audit import audit
from tests.security.test_untrusted_surfaces import hostile
from tests.security.test_untrusted_text import HOST
from tests.support import ROOT

pytestmark = pytest.mark.slow
TOKEN = "ghs_test_token"
PATH = "src/many.py"
EDITING = "rtcbot / EditingRTC"


def _github(fake_github: Callable[..., FakeGitHub]) -> FakeGitHub:
    """Pull request 1 (a one-hunk edit of src/many.py by Codertocat); the workflow's token."""
    gh = fake_github()
    gh.grant_token(TOKEN)
    gh.add_pr(1, diff_text=many_hunks_diff(PATH, hunks=1))
    return gh


def command(gh: FakeGitHub, llm: ScriptedLLM, tmp_path: Path, body: str, user: str = "Codertocat",
            user_type: str = "User", **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`user` writes `body` in pull request 1's conversation; the Action runs on its event."""
    c = gh.add_issue_comment(1, body, user=user, user_type=user_type)
    event = tmp_path / f"event-{c['id']}.json"
    event.write_text(json.dumps(gh.issue_comment_event(1, c)), encoding="utf-8")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "INPUT_", "RTCBOT_"))
            or k == "RTCBOT_CACHE_DIR"}  # the test's own LLM cache
    base.update({"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "issue_comment",
                 "GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": TOKEN, "GITHUB_WORKSPACE": str(tmp_path),
                 "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
                 "INPUT_LLM-BASE-URL": llm.base_url, "INPUT_MODEL": llm.model, "INPUT_ANALYZERS": "editing-rtc",
                 **env})
    proc = subprocess.run([sys.executable, "-m", "bot", "action"], cwd=ROOT, env=base, capture_output=True,
                          text=True, timeout=300, check=False)
    return proc, c


def replies(gh: FakeGitHub) -> list[str]:
    return [c["body"] for c in gh.issue_comments if c["user"]["login"] == "rtcbot[bot]"]


def test_the_author_reruns_through_the_action(fake_github: Callable[..., FakeGitHub],
                                              scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    proc, c = command(gh, llm, tmp_path, "Pushed a fix.\n@rtcbot rerun editing-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [run] = gh.runs(EDITING)
    assert run["head_sha"] == gh.pulls[1].head_sha and run["status"] == "completed" and run["annotations"]
    assert gh.comment_reactions("issue", c["id"]) == ["eyes", "+1"]
    [receipt] = replies(gh)  # the author's re-run is counted by rtcbot's own reply (bot/action/charges.py)
    assert receipt.startswith(f"rtcbot is running `rerun` at the head `{gh.pulls[1].head_sha[:12]}` for this pull "
                              "request's author: 1 of the 5 they may ask for in a day.")
    assert "issue_comment: the pull request is read as data only" in proc.stderr  # nothing from it runs
    assert "rerun by Codertocat: re-ran editing_rtc" in proc.stderr and llm.request_count > 0


def test_explain_through_the_action_analyses_the_hunk_again_and_shows_it_inert(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(hostile)
    proc, _ = command(gh, llm, tmp_path, f"@rtcbot explain {PATH}:2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    receipt, reply = replies(gh)
    head = gh.pulls[1].head_sha[:12]
    assert receipt.startswith(f"rtcbot is running `explain` at the head `{head}`")
    assert reply.startswith(f"rtcbot analysed the hunk at `{PATH}:2` again at the head `{head}`")
    assert f"**Why EditingRTC scored this** at `{PATH}:2`" in reply  # bot/core/explain.py, as on the App
    assert "### The regenerated code against the real edit" in reply and "-    return x * 0" in reply
    found = audit(reply, HOST)
    assert found.clean, found
    assert gh.check_runs == {}  # an explanation publishes no check run
    proc, _ = command(gh, llm, tmp_path, f"@rtcbot explain {PATH}:40")
    assert replies(gh)[-1] == f"This pull request changes no hunk at `{PATH}:40` at the head `{head}`."


def test_someone_without_write_access_is_refused(fake_github: Callable[..., FakeGitHub],
                                                  scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    gh.permissions["mallory"] = "triage"
    for body in ("@rtcbot rerun", f"@rtcbot explain {PATH}:2", "@rtcbot ignore editing_rtc because noisy"):
        proc, _ = command(gh, llm, tmp_path, body, user="mallory")
        assert proc.returncode == 0, proc.stderr[-3000:]
    assert replies(gh) == [
        "Only the pull request's author and people with write access to this repository can `rerun` or "
        "`explain` here.",
        "Only the pull request's author and people with write access to this repository can `rerun` or "
        "`explain` here.",
        pr_commands.no_write_reply("ignore")]
    assert gh.check_runs == {} and llm.request_count == 0
    assert gh.permission_requests >= 3  # asked of GitHub with the workflow's token


def test_the_authors_reruns_a_day_are_bounded(fake_github: Callable[..., FakeGitHub],
                                              scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    earlier = gh.add_issue_comment(1, receipt(user_id("Codertocat"), "rerun", 1, 1, "0" * 40), user="rtcbot[bot]",
                                   user_type="Bot")  # rtcbot's reply to a re-run earlier today
    gh.add_issue_comment(1, receipt(user_id("someone-else"), "rerun", 1, 1, "0" * 40), user="rtcbot[bot]",
                         user_type="Bot")  # another person's: not counted
    proc, _ = command(gh, llm, tmp_path, "@rtcbot rerun", RTCBOT_AUTHOR_RERUNS_PER_DAY="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert replies(gh)[2:] == [pr_commands.author_budget_reply(1)] and gh.check_runs == {}
    earlier["created_at"] = earlier["updated_at"] = "2020-01-01T00:00:00Z"  # more than a day ago
    proc, _ = command(gh, llm, tmp_path, "@rtcbot rerun", RTCBOT_AUTHOR_RERUNS_PER_DAY="1")
    assert proc.returncode == 0 and len(gh.check_runs) == 1
    proc, _ = command(gh, llm, tmp_path, "@rtcbot rerun", RTCBOT_AUTHOR_RERUNS_PER_DAY="-1")
    assert proc.returncode == 2 and "RTCBOT_AUTHOR_RERUNS_PER_DAY: must be at least 0" in proc.stderr


def test_a_bots_comment_and_an_unaddressed_one_are_never_commands(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    proc, _ = command(gh, llm, tmp_path, "@rtcbot rerun", user="renovate[bot]", user_type="Bot")
    assert proc.returncode == 0 and "a bot's comment is never a command: nothing to do" in proc.stderr
    proc, _ = command(gh, llm, tmp_path, "Looks good to me, cc @rtcbot-fan")
    assert proc.returncode == 0 and "does not address @rtcbot" in proc.stderr
    assert gh.requests == [] and llm.request_count == 0  # not one request


def test_ignore_answers_with_the_entry_to_commit(fake_github: Callable[..., FakeGitHub],
                                                 scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    gh.permissions["carol"] = "write"
    proc, c = command(gh, llm, tmp_path, "@rtcbot ignore editing_rtc in src/** because the model is small: `x` @y",
                      user="carol")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [reply] = replies(gh)
    assert "commit this entry to `.github/rtcbot-dismissals.yml` on the default branch" in reply
    block = re.search(r"^(`{3,})yaml\n(.*?)^\1$", reply, re.M | re.S)
    assert block is not None
    [d] = parse_dismissals(block.group(2)).dismissals  # the exact file text to commit
    assert (d.target, d.kind, d.path_glob, d.by, d.reason) == (
        "editing_rtc", "rule", "src/**", "carol", "the model is small: `x` @y")
    assert audit(reply, HOST).clean
    gh.set_file(".github/rtcbot-dismissals.yml", block.group(2))  # committed on the default branch
    command(gh, llm, tmp_path, "@rtcbot dismissals")
    assert replies(gh)[-1].startswith("Dismissed in `.github/rtcbot-dismissals.yml` on the default branch (1):")
    command(gh, llm, tmp_path, "@rtcbot unignore editing_rtc", user="carol")
    assert replies(gh)[-1].startswith("Remove this entry from `.github/rtcbot-dismissals.yml`")
    assert llm.request_count == 0


def test_a_rerun_of_an_analyzer_the_config_turns_off_says_so(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, llm = _github(fake_github), scripted_llm(varied)
    gh.set_file(".github/rtcbot.yml", "analyzers: {editing_rtc: true, autofix: false}\n", ref="0" * 40)  # the base
    proc, c = command(gh, llm, tmp_path, "@rtcbot rerun autofix synthesis-rtc", INPUT_ANALYZERS="")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert replies(gh) == ["`autofix` is turned off in `.github/rtcbot.yml`, so rtcbot does not re-run it; turn it "
                           "on there (on the default branch) first. `synthesis_rtc` would run the pull request's "
                           "code, which a command never does."]
    assert gh.check_runs == {} and gh.comment_reactions("issue", c["id"]) == ["eyes"]
