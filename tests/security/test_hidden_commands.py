"""Commands come from what a reader sees (issue #51, item 7), on the App through the fake GitHub.

Attack covered: a command hidden where the people reading the conversation cannot see it. On
f32233f `@rtcbot ignore …` was obeyed from any line outside a fenced block: in an indented or
tab-indented code block, inside `<!-- … -->` (a block or inline), in the folded body of a
`<details>`, inside another HTML element. A maintainer who pastes or approves such a comment
(text the pull request's author drafted for them, say) dismisses a finding without seeing the
command. Now the comment is parsed as CommonMark (bot/core/comment_text.py) and commands are read
only from top-level paragraphs: each hidden form below is not a command — no reaction, no reply,
nothing dismissed — and the same command written visibly is obeyed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.bot.app_support import App
from tests.bot.test_comment_commands import app, repo_id  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow  # one App, ten comments: about 10 s
COMMAND = "@rtcbot ignore editing_rtc because it is noisy"
HIDDEN = {
    "an indented code block": f"Looks good to me.\n\n    {COMMAND}\n",
    "a tab-indented code block": f"\t{COMMAND}\n",
    "an HTML comment block": f"Looks good to me.\n<!--\n{COMMAND}\n-->\n",
    "an inline HTML comment": f"Looks good to me <!-- \n{COMMAND}\n --> thanks\n",
    "a <details> body": f"Looks good to me.\n\n<details>\n<summary>notes</summary>\n\n{COMMAND}\n\n</details>\n",
    "a <details> opened inline": f"Looks good to me <details>\n\n{COMMAND}\n\n</details>\n",
    "another HTML element": f'<div hidden>\n\n{COMMAND}\n\n</div>\n',
    "a fenced code block": f"Looks good to me.\n```\n{COMMAND}\n```\n",
    "a block quote": f"> {COMMAND}\n\nLooks good to me.\n",
}


def test_a_command_hidden_from_readers_is_not_obeyed_and_a_visible_one_is(
        app: Callable[..., App]) -> None:  # noqa: F811
    a = app()
    a.gh.permissions["carol"] = "write"
    for form, body in HIDDEN.items():
        c = a.say(body, user="carol")
        assert a.gh.comment_reactions("issue", c["id"]) == [], form
        assert a.replies() == [], form
        assert a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo) == [], form
    assert a.rt.store.jobs.where(kind="command") == []
    # the same command where a reader sees it, after the same prose
    c = a.say(f"Looks good to me.\n{COMMAND}\n", user="carol")
    assert a.gh.comment_reactions("issue", c["id"]) == ["eyes", "+1"]
    [d] = a.rt.store.dismissals.listed(repo_id(a.gh), a.gh.repo)
    assert (d.target, d.by, d.reason) == ("editing_rtc", "carol", "it is noisy")
