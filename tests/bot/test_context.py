"""The context builder's review comments (bot/core/context.py `comments_from_github`), read from the
fake GitHub by the App's client and the Action's, placed on a real diff by side and line.

The diff: hunk 1 removes ten lines (the head's numbers fall 10 behind the base's), hunk 2
replaces base line 31 by head line 21, hunk 3 base line 41 by head line 31. A comment on the
removed base line 31 (`side: LEFT`) read as a head line landed on hunk 3's added line.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.crscore.analyzer import CRScoreAnalyzer, locate
from bot.app.settings import ServiceSettings
from bot.core.config import LoadedConfig
from bot.core.context import changes_from_github, comments_from_github, head_files
from bot.github import GitHubClient, GitHubSettings, installation_client, token_client
from tests.fakes.github_server import FakeGitHub

PATH = "src/table.py"
BASE = [f"x{i} = {i}\n" for i in range(1, 51)]
HEAD = [ln for i, ln in enumerate(BASE, 1) if not 3 <= i <= 12]
HEAD[HEAD.index("x31 = 31\n")] = "y31 = sum(x for x in range(31))\n"
HEAD[HEAD.index("x41 = 41\n")] = "y41 = max(x41, 0)\n"
DIFF = "".join(difflib.unified_diff(BASE, HEAD, f"a/{PATH}", f"b/{PATH}", n=1))
SURFACES = ("app", "action")


def client(gh: FakeGitHub, surface: str) -> GitHubClient:
    """The App's client (an installation's token) or the Action's (GITHUB_TOKEN)."""
    if surface == "app":
        return installation_client(ServiceSettings(app_id=gh.app_id, private_key=gh.private_key_pem,
                                                   github_api_url=gh.base_url), gh.installation_id)
    gh.grant_token("ghs_action")
    return token_client(gh.base_url, "ghs_action", GitHubSettings())


@pytest.fixture
def gh(fake_github: Callable[..., FakeGitHub]) -> FakeGitHub:
    g = fake_github()
    g.add_pr(5, diff_text=DIFF)
    return g


def read(gh: FakeGitHub, surface: str) -> tuple[ChangeSet, dict[str, ReviewComment]]:
    """What both surfaces do: the PR's files and comments through the client, then bot/context."""
    c = client(gh, surface)
    changes = changes_from_github(c.pr_files(gh.repo, 5), LoadedConfig())
    comments = comments_from_github(c.review_comments(gh.repo, 5))
    return changes, {rc.body: rc for rc in comments}


def hunk_no(changes: ChangeSet, comment: ReviewComment) -> int | str:
    where = locate(changes, comment)
    if isinstance(where, str):
        return where
    fc, (h,) = where
    return fc.hunks.index(h) + 1


def test_the_diff_is_the_one_described() -> None:
    assert [ln for ln in DIFF.splitlines() if ln.startswith("@@")] == [
        "@@ -2,12 +2,2 @@", "@@ -30,3 +20,3 @@", "@@ -40,3 +30,3 @@"]


@pytest.mark.parametrize("surface", SURFACES)
def test_a_comment_on_a_removed_line_is_placed_on_the_base_side(gh: FakeGitHub, surface: str) -> None:
    gh.add_comment(5, PATH, 31, "why drop x31?", side="LEFT")  # base line 31: removed in hunk 2
    gh.add_comment(5, PATH, 31, "y41 can be negative?")  # head line 31: added in hunk 3
    gh.add_comment(5, PATH, 30, "context, base side", side="LEFT")  # x30, head line 20
    gh.add_comment(5, PATH, 35, "a base line no hunk shows", side="LEFT")
    changes, by = read(gh, surface)
    left, right = by["why drop x31?"], by["y41 can be negative?"]
    assert hunk_no(changes, left) == 2 and hunk_no(changes, right) == 3  # before: both on hunk 3
    assert (left.side, left.line, right.side) == ("LEFT", 31, "RIGHT")
    (fc,) = changes.files
    assert [(ln.kind, ln.text) for ln in left.lines_in(fc.hunks[1])] == [("-", "x31 = 31")]
    assert left.lines_in(fc.hunks[2]) == []
    assert left.head_span(fc.hunks[1]) == (21, 21)  # where x31 was replaced, in the head
    assert right.head_span(fc.hunks[2]) == (31, 31)
    assert by["context, base side"].head_span(fc.hunks[1]) == (20, 20)
    assert hunk_no(changes, by["a base line no hunk shows"]) == "line outside the diff"


@pytest.mark.parametrize("surface", SURFACES)
def test_multi_line_comments_keep_both_ends(gh: FakeGitHub, surface: str) -> None:
    gh.add_comment(5, PATH, 21, "old and new x31", side="RIGHT", start_line=31, start_side="LEFT")
    gh.add_comment(5, PATH, 22, "the whole block", start_line=20)
    changes, by = read(gh, surface)
    (fc,) = changes.files
    h = fc.hunks[1]
    across = by["old and new x31"]
    assert (across.start_line, across.start_side, across.side) == (31, "LEFT", "RIGHT")
    assert [ln.kind for ln in across.lines_in(h)] == ["-", "+"]
    assert across.head_span(h) == (21, 21)
    block = by["the whole block"]
    assert (block.start_line, block.start_side) == (20, "RIGHT")
    assert [ln.kind for ln in block.lines_in(h)] == [" ", "-", "+", " "]
    assert block.head_span(h) == (20, 22)


@pytest.mark.parametrize("surface", SURFACES)
def test_outdated_and_file_comments_the_same_on_both_surfaces(gh: FakeGitHub, surface: str) -> None:
    """An outdated comment (`line: null`) keeps its `original_line`, a line of the commit it
    was written on, so it is marked and placed nowhere (read as a line of this diff it lands
    on unrelated code); a comment on the file is about all of the file's hunks."""
    gh.add_comment(5, PATH, None, "this was wrong", original_line=31)
    gh.add_comment(5, PATH, None, "split this module", subject_type="file")
    changes, by = read(gh, surface)
    outdated, whole = by["this was wrong"], by["split this module"]
    assert (outdated.outdated, outdated.line, whole.outdated, whole.line) == (True, 31, False, 0)
    assert locate(changes, outdated) == "outdated: GitHub no longer shows it on the diff"
    where = locate(changes, whole)
    assert not isinstance(where, str) and len(where[1]) == 3


@pytest.mark.model
def test_crscore_scores_a_base_side_comment_on_its_own_hunk(gh: FakeGitHub, tmp_path: Path) -> None:
    """End to end (no LLM: smells only): the finding sits where the removed line was, in the
    head file; an outdated comment is listed as skipped, with the reason."""
    gh.add_comment(5, PATH, 31, "Why is x31 removed? Callers import it.", side="LEFT")
    gh.add_comment(5, PATH, None, "old remark", original_line=41)
    changes, by = read(gh, "action")
    (tmp_path / "src").mkdir()
    (tmp_path / PATH).write_text("".join(HEAD), encoding="utf-8")
    ctx = AnalysisContext(comments=list(by.values()),
                          file_loader=head_files(tmp_path, lambda path: None, limit=10**6))
    report = CRScoreAnalyzer().run(changes, ctx)
    assert report.error is None
    (finding,) = report.findings
    assert (finding.path, finding.start_line, finding.end_line) == (PATH, 21, 21)
    assert [(s.reason) for s in report.skipped] == ["outdated: GitHub no longer shows it on the diff"]


@pytest.mark.parametrize("surface", SURFACES)
def test_rtcbots_own_comments_are_marked_ours_and_not_scored(gh: FakeGitHub, surface: str) -> None:
    """The App knows its bot (GET /app: `rtcbot[bot]`); the Action asks GitHub who its token is
    (GraphQL `viewer`: `github-actions[bot]`) and takes that identity's comments with its marker.
    Either way CRScore lists rtcbot's comments apart and scores none; another bot's marker and
    a person's count for nothing."""
    from bot.core.context import marked_by
    from bot.github import app_identity

    marker = "\n<!-- rtcbot:suggestion:0123456789abcdef -->"
    login = gh.bot = "rtcbot[bot]" if surface == "app" else "github-actions[bot]"
    gh.add_comment(5, PATH, 31, "```suggestion\ny41 = max(x41, 1)\n```" + marker, user=login, user_type="Bot")
    gh.add_comment(5, PATH, 21, "another bot" + marker, user="lint[bot]", user_type="Bot")
    gh.add_comment(5, PATH, 21, "a person" + marker, user="alice")  # a person's marker never counts
    settings = ServiceSettings(app_id=gh.app_id, private_key=gh.private_key_pem, github_api_url=gh.base_url)
    c = client(gh, surface)
    # the App's rule (bot/app/pipeline.py `owns`: a Bot user, and this App's); the Action's: the
    # token's identity and the marker (bot/action/run.py)
    ours = (lambda x: app_identity(settings).wrote(x)) if surface == "app" else marked_by(c.wrote)
    by = {rc.author: rc for rc in comments_from_github(c.review_comments(gh.repo, 5), ours)}
    assert [by[a].ours for a in (login, "lint[bot]", "alice")] == [True, False, False]
    report = CRScoreAnalyzer().run(ChangeSet(), AnalysisContext(comments=[by[login]]))
    assert report.findings == [] and [s.reason for s in report.skipped] == [
        "written by rtcbot: its own comments are not scored"]
