"""Commands people write to rtcbot on a pull request, addressed to the App by its bot name
(`@<slug> rerun`, in the conversation or in a review thread). Pure: a comment's text in, a
typed command out; shared by the App (bot/app/comment_commands.py) and the Action.

    @rtcbot help                                   the commands, in one short reply
    @rtcbot rerun [analyzer …]                     the head again (every analysis, or those named)
    @rtcbot explain [path:line]                    the evidence behind a score (in a thread on one
                                                   of rtcbot's comments: that one)
    @rtcbot ignore <rule|this> [in <glob>] [because <reason>]
    @rtcbot unignore <rule|this> [in <glob>]
    @rtcbot dismissals                             what is ignored in this repository

Only the first line that starts with the address counts, and only among the lines a reader sees
as prose (bot/core/comment_text.py: a top-level paragraph's; never a code block, fenced or
indented, an HTML block or comment, a `<details>` body, a block quote or a list item).
A comment is text, never a program: a path or glob must be relative and inside the repository
(no `..`, no leading `/`, no backslash, no control character), every part is bounded, and
anything else is `Malformed` (answered with the help text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.core.comment_text import visible_lines
from bot.core.verbs.base import MAX_LINE, MAX_REASON, Command, Help, Malformed, safe_path
from bot.core.verbs.dismiss import Ignore, Unignore
from bot.core.verbs.dismissals import Dismissals
from bot.core.verbs.explain import Explain
from bot.core.verbs.rerun import Rerun
from bot.core.verbs.table import VERBS

_ADDRESS = re.compile(r"^@(?P<slug>[A-Za-z0-9][A-Za-z0-9-]*)(?:\[bot\])?(?=\s|$)(?P<rest>.*)$", re.I)

__all__ = ["MAX_LINE", "Command", "Dismissals", "Explain", "Help", "Ignore", "Malformed", "Rerun", "Unignore",
           "addressed", "author_budget_reply", "closed_reply", "help_text", "is_bot", "no_write_reply", "parse",
           "proposed_ignore", "safe_path", "spend_refused", "turned_off_reply", "wont_fix"]


def help_text(slug: str) -> str:
    """The commands, in one short reply (rtcbot's Markdown): each command's line, then help's."""
    at = f"@{slug}"
    return "\n".join([f"Commands for `{at}` (in this conversation or in a review thread):", "",
                      *(f"- {verb.usage(at)}" for verb in VERBS.values()), f"- `{at} help`: this list"])


def addressed(body: str | None, slug: str) -> str | None:
    """The text after `@<slug>` on the first line that starts with it among the lines a reader
    sees as prose (`visible_lines`; "" for the address alone), or None when the comment does not
    address the App."""
    for raw in visible_lines(body):
        a = _ADDRESS.match(raw.strip())
        if a and a.group("slug").lower() == slug.lower():
            return a.group("rest").strip()[:MAX_LINE]
    return None


def parse(text: str) -> Command:
    """The command in the text after the address (`addressed`): its verb's, from the table."""
    word, _, rest = text.strip().partition(" ")
    word, rest = word.lower(), rest.strip()
    if word in ("", "help"):
        return Help() if not rest else Malformed("help takes nothing after it")
    verb = VERBS.get(word)
    return verb.parse(rest) if verb is not None else Malformed(f"unknown command {word[:40]!r}")


def is_bot(user: object) -> bool:
    """Whether a comment's `user` is a bot's (whose comments are never commands)."""
    if not isinstance(user, dict):
        return False
    return user.get("type") == "Bot" or str(user.get("login") or "").endswith("[bot]")


# -- the replies both surfaces give (rtcbot's Markdown; a state is GitHub's word) --------------
def closed_reply(state: str) -> str:
    said = state if state in ("closed", "merged") else "not open"
    return f"This pull request is {said}: rtcbot takes no commands on it."


def no_write_reply(verb: str) -> str:
    return f"Only people with write access to this repository can use `{verb}`."


RERUN_REFUSED = "Only the pull request's author and people with write access to this repository can `rerun`."


def spend_refused(*, explain: bool) -> str:
    """Why someone who neither wrote the pull request nor has write access may not spend (a
    `rerun`; an `explain` too, where it analyses again)."""
    return RERUN_REFUSED.replace("`rerun`", "`rerun` or `explain` here") if explain else RERUN_REFUSED


def author_budget_reply(budget: int) -> str:
    return (f"The pull request's author can ask for {budget} re-run(s) a day here, and has; "
            "someone with write access can ask for more.")


def turned_off_reply(names: Sequence[str], config: str) -> str:
    """What a `rerun` of analyzers the repository's config turns off says (nothing is run for them)."""
    listed = ", ".join(f"`{n.replace('_', '-')}`" for n in names)
    return (f"{listed} {'is' if len(names) == 1 else 'are'} turned off in `{config}`, so rtcbot does not "
            f"re-run {'it' if len(names) == 1 else 'them'}; turn {'it' if len(names) == 1 else 'them'} on there "
            "(on the default branch) first.")


# -- "won't fix": a resolved thread proposes a dismissal, never makes one -----------------------
_WONT_FIX = re.compile(r"\b(won['\u2019]?t\s+fix|wontfix|will\s+not\s+fix|not\s+a\s+bug|false[\s-]+positive|"
                       r"intended|intentional(?:ly)?|by\s+design)\b", re.I)


def wont_fix(body: str | None) -> str | None:
    """The reason a reply gives for leaving one of rtcbot's findings as it is ("won't fix", "not a
    bug", "false positive", "intended", "by design"): its first line that says so, outside code
    blocks and quotes (`visible_lines`), on one line and bounded (MAX_REASON); None when it says
    none of that."""
    for raw in visible_lines(body):
        if not _WONT_FIX.search(raw):
            continue
        line = " ".join("".join(ch for ch in raw if ch.isprintable()).split())
        return line[:MAX_REASON].rstrip()
    return None


def proposed_ignore(slug: str, reason: str) -> str:
    """The command that confirms a proposed dismissal of a thread's finding (what `parse` reads
    back as `Ignore("this", None, reason)`)."""
    return f"@{slug} ignore this because {' '.join(reason.split())[:MAX_REASON]}"
