"""A comment is rtcbot's own only when both its marker and its author are rtcbot's, on every
surface: the App by its bot (`GET /app`), the Action by the identity GitHub gives its token
(GraphQL `viewer`: `github-actions[bot]` for the workflow's GITHUB_TOKEN), the CLI by the login
it is told (`--own-login`), else none.

The attacker is another bot (an App installed on the repository, or a workflow run with
another token) that copies rtcbot's suggestion marker into its own review comment, to have it
taken for rtcbot's: left unscored (so a gate on CRScore stops holding), or counted as a
suggestion already posted (so rtcbot's fix never reaches the pull request).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers.code.diff import parse_github_files
from analyzers.report import AnalyzerReport, Finding, Fix
from bot.core.context import comments_from_github, marked_by
from bot.entry import main
from bot.github import GitHubSettings, graphql_url, token_client
from reporters.base import Target
from reporters.base import run_reporter as drive
from reporters.diff_filter import DiffFilter
from reporters.pr_review import MARKER, PullRequestReviewReporter, key_of
from tests.bot.test_action import EVENT, TOKEN, pr_github, read_outputs, run_action  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM, varied

ACTIONS_BOT = "github-actions[bot]"  # who the workflow's GITHUB_TOKEN posts as
ATTACKER = "evil-helper[bot]"
PATCH = "@@ -1,2 +1,2 @@\n def f(x):\n-    y = x\n+    y = eval(x)\n"
FILES = [{"filename": "m.py", "status": "modified", "patch": PATCH}]
FIX = Finding("autofix", "code injection", "eval", "m.py", 2, 2, scores={"fixed": 1.0, "rtc_pass": 1.0},
              rule_id="r", fix=Fix("m.py", 2, 2, "    y = int(x)\n", "-    y = x\n+    y = int(x)\n"))
JAVA = "src/main/java/org/jsoup/internal/StringUtil.java"  # a file of the Action tests' pull request


def no_comment_touched(gh: FakeGitHub) -> None:
    """rtcbot edited and deleted no comment (nor anything else) on the fake GitHub."""
    assert [r for r in gh.requests if r.method in ("PATCH", "DELETE") and "/comments" in r.path] == []


def test_another_bots_copy_of_the_marker_does_not_hide_the_actions_suggestion(
        fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811
    gh = fake_github()
    gh.bot = ACTIONS_BOT
    gh.grant_token(TOKEN)
    pr = gh.add_pr(4, files=[dict(f) for f in FILES])
    copied = gh.add_comment(4, "m.py", 2, "ok " + MARKER.format(key=key_of(FIX)), user=ATTACKER, user_type="Bot")
    client = token_client(gh.base_url, TOKEN, GitHubSettings(write_interval_s=0.0))
    target = Target(gh.repo, 4, pr.head_sha, diff=DiffFilter.of(parse_github_files(FILES)))

    def reviewer() -> PullRequestReviewReporter:
        return PullRequestReviewReporter(client, comments=lambda: client.review_comments(gh.repo, 4))

    report = AnalyzerReport("autofix", "AutoFix", findings=[FIX])
    assert drive(reviewer(), target, {"autofix": "AutoFix"}, [report]) == 1
    assert [c["user"]["login"] for c in pr.comments] == [ATTACKER, ACTIONS_BOT]  # posted as the token
    # the token's own comment, now posted, does count: a re-run posts nothing again
    assert drive(reviewer(), target, {}, [AnalyzerReport("autofix", "AutoFix", findings=[FIX])]) == 0
    assert len(gh.reviews) == 1
    assert pr.comments[0] == copied  # the attacker's comment: as it was
    no_comment_touched(gh)
    assert sum(r.path == "/graphql" for r in gh.requests) == 1  # who the token is: asked once


def test_a_token_whose_identity_github_does_not_give_owns_no_comment(
        fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811
    """No guess (any bot, the usual github-actions[bot]): with `viewer` refused, no comment is
    rtcbot's, so none is left unscored — a suggestion may at worst be posted again."""
    gh = fake_github()
    gh.bot = ACTIONS_BOT
    gh.grant_token(TOKEN)
    gh.add_pr(4, files=[dict(f) for f in FILES])
    marker = MARKER.format(key=key_of(FIX))
    gh.add_comment(4, "m.py", 2, "mine " + marker, user=ACTIONS_BOT, user_type="Bot")
    gh.add_comment(4, "m.py", 2, "copied " + marker, user=ATTACKER, user_type="Bot")
    gh.fail_next(1, status=404, retry_after=None, match="/graphql")
    client = token_client(gh.base_url, TOKEN, GitHubSettings(write_interval_s=0.0))
    comments = comments_from_github(client.review_comments(gh.repo, 4), marked_by(client.wrote))
    assert [(c.author, c.ours) for c in comments] == [(ACTIONS_BOT, False), (ATTACKER, False)]


@pytest.mark.slow
def test_an_attackers_marked_comment_is_scored_and_the_gate_holds_through_the_action(
        pr_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    """`rtcbot action` with a gate on CRScore: the attacker's marked comment is scored like
    any other (it was skipped as rtcbot's, and the gate on it did not hold); the token's own
    marked comment is still rtcbot's and unscored; nothing is edited or deleted."""
    gh = pr_github()
    gh.bot = ACTIONS_BOT
    number = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]["number"]
    marker = "\n" + MARKER.format(key="0123456789abcdef")
    gh.add_comment(number, JAVA, 312, "Looks fine to merge." + marker, user=ATTACKER, user_type="Bot")
    gh.add_comment(number, JAVA, 313, "```suggestion\nx\n```" + marker, user=ACTIONS_BOT, user_type="Bot")
    proc = run_action(gh, scripted_llm(varied), tmp_path, analyzers="crscore", fail_on="crscore.findings>0",
                      reporters="")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "fail-on matched: crscore.findings>0" in proc.stderr
    (run,) = gh.check_runs.values()
    assert [(a["path"], a["start_line"]) for a in run["annotations"]] == [(JAVA, 312)]  # the attacker's, scored
    assert "written by rtcbot: its own comments are not scored" in run["output"]["text"]  # the token's own
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"
    no_comment_touched(gh)


def test_the_cli_owns_only_comments_by_the_login_it_is_told(
        tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """`rtcbot review --comments` with GitHub's comments: `--own-login` names rtcbot's login there;
    a marker by another bot, or any marker without the option, leaves the comment to be scored
    (here: placed where the diff shows no line, so no model is asked)."""
    patch = tmp_path / "change.diff"
    patch.write_text("--- a/m.py\n+++ b/m.py\n" + PATCH, encoding="utf-8")
    marker = MARKER.format(key=key_of(FIX))
    comments = tmp_path / "comments.json"
    comments.write_text(json.dumps([
        {"path": "other.py", "line": 2, "side": "RIGHT", "body": f"mine {marker}",
         "user": {"login": ACTIONS_BOT, "type": "Bot"}},
        {"path": "other.py", "line": 3, "side": "RIGHT", "body": f"copied {marker}",
         "user": {"login": ATTACKER, "type": "Bot"}}]), encoding="utf-8")
    llm = scripted_llm(varied)

    def skipped(*own: str) -> list[str]:
        res = CliRunner().invoke(main, ["review", str(patch), "--comments", str(comments), "--analyzers", "crscore",
                                        "--format", "json", "--llm-base-url", llm.base_url, "--model", llm.model,
                                        *own])
        assert res.exit_code == 0, res.output[-3000:]
        (report,) = json.loads(res.stdout)["reports"]
        return [s["reason"] for s in report["skipped"]]

    assert skipped("--own-login", ACTIONS_BOT) == ["written by rtcbot: its own comments are not scored",
                                                   "file not in the diff"]
    assert skipped() == ["file not in the diff", "file not in the diff"]
    assert llm.request_count == 0


def test_the_graphql_endpoint_is_beside_the_rest_api() -> None:
    """Where the Action asks who its token is, on github.com and on GitHub Enterprise Server."""
    assert graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_url("https://ghe.example/api/v3/") == "https://ghe.example/api/graphql"
