"""What a reader sees of a comment (bot/core/comment_text.py): the lines of its top-level
paragraphs, as a CommonMark parser reads them."""

from __future__ import annotations

import pytest

from bot.core.comment_text import visible_lines
from bot.core.pr_commands import addressed, wont_fix


def test_paragraph_lines_are_read_as_github_shows_them() -> None:
    assert list(visible_lines("thanks!\n@rtcbot rerun\n\nsecond `code` **bold** [link](http://x)")) == [
        "thanks!", "@rtcbot rerun", "second `code` bold link"]
    assert list(visible_lines("LGTM\n\t@rtcbot help")) == ["LGTM", "@rtcbot help"]  # a paragraph's lazy line
    assert list(visible_lines(None)) == [] and list(visible_lines("")) == []


@pytest.mark.parametrize("body", [
    "    @rtcbot help",  # indented code
    "\t@rtcbot help",  # tab-indented code
    "```\n@rtcbot help\n```",  # fenced code
    "~~~~\n@rtcbot help\n~~~~",
    "<!--\n@rtcbot help\n-->",  # an HTML comment block
    "ok <!--\n@rtcbot help\n--> bye",  # an inline HTML comment: the paragraph stops at it
    "ok <span hidden>\n@rtcbot help</span>",  # any inline HTML
    "<details>\n\n@rtcbot help\n\n</details>",  # a folded body
    "<details><summary>x</summary>\n\n@rtcbot help\n\n</details>",
    "a <details>\n\n@rtcbot help\n\n</details>",  # opened inline
    "<div>\n\n<div>\n\n</div>\n\n@rtcbot help\n\n</div>",  # nested elements: still inside the outer one
    "> @rtcbot help",  # a block quote
    "- @rtcbot help",  # a list item
    "![@rtcbot help](x.png)",  # an image's alternative text
])
def test_text_a_reader_does_not_see_as_prose_is_not_read(body: str) -> None:
    assert "@rtcbot help" not in list(visible_lines(body)), body
    assert addressed(body, "rtcbot") is None


def test_text_after_a_closed_element_or_a_void_one_is_read() -> None:
    assert addressed("<details>\n\nhidden\n\n</details>\n\n@rtcbot help", "rtcbot") == "help"
    assert addressed("<!-- a template's note -->\n\n@rtcbot help", "rtcbot") == "help"
    assert addressed("<br>\n\n@rtcbot help", "rtcbot") == "help"


def test_a_wont_fix_reason_comes_from_visible_prose_only() -> None:
    assert wont_fix("Won't fix: the input is trusted.") == "Won't fix: the input is trusted."
    assert wont_fix("Thanks.\n\n    won't fix\n") is None
    assert wont_fix("<!-- won't fix -->\nThanks.") is None
    assert wont_fix("> not a bug\n\nI disagree.") is None
