"""bot/cli/review_source.py: what `rtcbot review` reads besides the change (bot/cli/patch_input.py
has its own tests): review comments in either JSON shape, rtcbot's own told by the login."""

from __future__ import annotations

import json
from pathlib import Path

from bot.cli.review_source import load_comments

PATH = "src/table.py"


def test_review_reads_githubs_own_comment_json_by_side(tmp_path: Path) -> None:
    listed = [{"id": 1, "path": "a.py", "line": 4, "side": "LEFT", "original_line": 4, "body": "why drop this?",
               "user": {"login": "alice", "type": "User"}},
              {"id": 2, "path": "a.py", "line": None, "original_line": 9, "body": "old", "user": {"login": "bob"}}]
    f = tmp_path / "comments.json"
    f.write_text(json.dumps(listed))
    left, outdated = load_comments(f)
    assert (left.path, left.line, left.side, left.author) == ("a.py", 4, "LEFT", "alice")
    assert outdated.outdated is True  # placed nowhere, as on the App and the Action
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([{"path": "a.py", "line": 3, "body": "x", "author": "me"}]))
    [c] = load_comments(plain)
    assert (c.line, c.side, c.author) == (3, "RIGHT", "me")


def test_the_cli_reads_rtcbots_own_comments_from_a_file_as_ours_only_by_the_login_it_is_told(
        tmp_path: Path) -> None:
    """`rtcbot review --comments FILE` with GitHub's comments: rtcbot's are those with its marker
    by `--own-login`; without it, the CLI knows no identity of rtcbot's and none is."""
    marker = "\n<!-- rtcbot:suggestion:0123456789abcdef -->"
    f = tmp_path / "comments.json"
    f.write_text(json.dumps([
        {"path": PATH, "line": 21, "side": "RIGHT", "user": {"type": "Bot", "login": "github-actions[bot]"},
         "body": "```suggestion\nx\n```" + marker},
        {"path": PATH, "line": 21, "side": "RIGHT", "user": {"type": "Bot", "login": "lint[bot]"},
         "body": "copied" + marker},
        {"path": PATH, "line": 21, "side": "RIGHT", "user": {"type": "User", "login": "alice"}, "body": "why?"}]))
    assert [c.ours for c in load_comments(f, "github-actions[bot]")] == [True, False, False]
    assert [c.ours for c in load_comments(f)] == [False, False, False]
