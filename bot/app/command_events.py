"""A comment on a pull request → the command job it asks for, or why none (pure; routed from
bot/app/events.py, run by bot/app/comment_commands.py).

A command is a comment *created* (an edit never runs one again) on a pull request, by a person
(a bot's comment is never a command), whose first addressed line names the App (`@<slug> …`,
bot/core/pr_commands.py). Its job carries the comment's id as its `once` key: the store makes
at most one job per comment, whatever the deliveries (bot/store/jobs.py `insert_job`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.core import pr_commands

COMMAND_EVENTS = frozenset({"issue_comment", "pull_request_review_comment"})


@dataclass(frozen=True, kw_only=True)
class CommandJob:
    """A command written to rtcbot on a pull request (bot/core/pr_commands.py)."""

    kind: Literal["command"] = "command"
    repo: str
    default_branch: str = "main"
    installation_id: int | None = None
    repository_id: int | None = None
    pr_number: int
    comment_id: int
    source: Literal["issue", "review"]  # a conversation comment, or a review comment (on a line)
    thread: int | None = None  # a review comment's thread: the id of its first comment
    author: str
    text: str  # what follows the address, bounded (pr_commands.MAX_LINE)
    verb: str  # the parsed command's verb ("malformed" included), for the store's counts
    head_sha: str | None = None  # a review comment's event says it; a conversation comment's does not
    state: str = "open"  # the pull request's, when the comment was written
    once: str = ""  # the store's key: one job per comment, ever

    @property
    def command(self) -> pr_commands.Command:
        return pr_commands.parse(self.text)


def may_address(event: str, payload: Mapping[str, Any]) -> bool:
    """Whether a delivery could be a command (so that routing it needs the App's name): a
    comment created on a pull request with an `@` in it."""
    if event not in COMMAND_EVENTS or payload.get("action") != "created":
        return False
    body = (payload.get("comment") or {}).get("body")
    return isinstance(body, str) and "@" in body


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def command_job(event: str, payload: Mapping[str, Any], base: Mapping[str, Any], slug: str | None
                ) -> CommandJob | str:
    """The command job of a comment delivery, or the note saying why there is none. `base`:
    repo, default_branch, installation_id, repository_id of the delivery."""
    action = payload.get("action")
    comment = payload.get("comment") or {}
    if action != "created":
        return f"{event}.{action}: only a new comment is a command (an edit never runs one again)"
    user = comment.get("user") or {}
    if user.get("type") == "Bot" or str(user.get("login") or "").endswith("[bot]"):
        return f"{event}: a bot's comment is never a command"
    issue = payload.get("issue") or {}
    if event == "issue_comment" and not isinstance(issue.get("pull_request"), Mapping):
        return "issue_comment: a comment on an issue, not on a pull request"
    text = None if slug is None else pr_commands.addressed(comment.get("body"), slug)
    if text is None:
        return f"{event}: not addressed to the App"
    cid = _int(comment.get("id"))
    if event == "issue_comment":
        number, state, head, thread = _int(issue.get("number")), str(issue.get("state") or "open"), None, None
    else:
        pr = payload.get("pull_request") or {}
        number, state = _int(pr.get("number")), str(pr.get("state") or "open")
        head = (pr.get("head") or {}).get("sha")
        thread = _int(comment.get("in_reply_to_id")) or cid
    if number is None or cid is None or not user.get("login"):
        return f"{event}: a command without a pull request number, a comment id or an author"
    return CommandJob(**base, pr_number=number, comment_id=cid, author=str(user["login"]),
                      source="issue" if event == "issue_comment" else "review", thread=thread,
                      text=text, verb=pr_commands.parse(text).verb,
                      head_sha=head if isinstance(head, str) and head else None, state=state,
                      once=f"comment:{event}:{cid}")
