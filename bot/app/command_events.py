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
from bot.core.feedback import keys_in
from bot.ids import positive_int

COMMAND_EVENTS = frozenset({"issue_comment", "pull_request_review_comment"})
THREAD_EVENT = "pull_request_review_thread"


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
    author_id: int | None = None  # the commenter's GitHub id: whose daily LLM budget a `rerun` spends
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


def command_job(event: str, payload: Mapping[str, Any], base: Mapping[str, Any], slug: str | None
                ) -> CommandJob | str:
    """The command job of a comment delivery, or the note saying why there is none. `base`:
    repo, default_branch, installation_id, repository_id of the delivery."""
    action = payload.get("action")
    comment = payload.get("comment") or {}
    if action != "created":
        return f"{event}.{action}: only a new comment is a command (an edit never runs one again)"
    user = comment.get("user") or {}
    if pr_commands.is_bot(user):
        return f"{event}: a bot's comment is never a command"
    issue = payload.get("issue") or {}
    if event == "issue_comment" and not isinstance(issue.get("pull_request"), Mapping):
        return "issue_comment: a comment on an issue, not on a pull request"
    text = None if slug is None else pr_commands.addressed(comment.get("body"), slug)
    if text is None:
        return f"{event}: not addressed to the App"
    cid = positive_int(comment.get("id"))
    if event == "issue_comment":
        number, state, head, thread = positive_int(issue.get("number")), str(issue.get("state") or "open"), None, None
    else:
        pr = payload.get("pull_request") or {}
        number, state = positive_int(pr.get("number")), str(pr.get("state") or "open")
        head = (pr.get("head") or {}).get("sha")
        thread = positive_int(comment.get("in_reply_to_id")) or cid
    if number is None or cid is None or not user.get("login"):
        return f"{event}: a command without a pull request number, a comment id or an author"
    return CommandJob(**base, pr_number=number, comment_id=cid, author=str(user["login"]),
                      author_id=positive_int(user.get("id")),
                      source="issue" if event == "issue_comment" else "review", thread=thread,
                      text=text, verb=pr_commands.parse(text).verb,
                      head_sha=head if isinstance(head, str) and head else None, state=state,
                      once=f"comment:{event}:{cid}")


@dataclass(frozen=True, kw_only=True)
class ProposalJob:
    """A review thread on one of the App's comments resolved with a last reply that says "won't
    fix" (bot/core/pr_commands.py `wont_fix`): the App proposes the `ignore this` command that
    would dismiss the finding, in the thread, once per thread, and dismisses nothing itself."""

    kind: Literal["proposal"] = "proposal"
    repo: str
    default_branch: str = "main"
    installation_id: int | None = None
    repository_id: int | None = None
    pr_number: int
    thread: int  # the thread's first comment: a bot's with rtcbot's marker (the App's, checked by the job)
    thread_author: str  # that bot's login
    comment_id: int  # the reply that says "won't fix"
    author: str  # who wrote it
    reason: str  # its line that says so, bounded
    once: str = ""  # the store's key: one proposal per thread, ever


def proposal_job(payload: Mapping[str, Any], base: Mapping[str, Any]) -> ProposalJob | str:
    """The proposal a resolved review thread asks for, or the note saying why there is none: its
    first comment is a bot's with rtcbot's marker (the job answers only where that bot is the
    App's), its last is a person's reply saying "won't fix", "not a bug", "false positive",
    "intended" or similar. Pure: routing it needs no GitHub call."""
    if payload.get("action") != "resolved":
        return f"{THREAD_EVENT}.{payload.get('action')}: nothing to propose"
    comments = [c for c in (payload.get("thread") or {}).get("comments") or [] if isinstance(c, Mapping)]
    pr = payload.get("pull_request") or {}
    if len(comments) < 2:
        return f"{THREAD_EVENT}: no reply in the thread"
    top, last = comments[0], comments[-1]
    user = top.get("user") or {}
    if user.get("type") != "Bot" or not keys_in([top.get("body")]):
        return f"{THREAD_EVENT}: not a thread on one of the App's findings"
    reason = None if pr_commands.is_bot(last.get("user")) else pr_commands.wont_fix(last.get("body"))
    if reason is None:
        return f"{THREAD_EVENT}: resolved without a \"won't fix\" reply"
    number, tid, cid = positive_int(pr.get("number")), positive_int(top.get("id")), positive_int(last.get("id"))
    if pr.get("state", "open") != "open" or number is None or tid is None or cid is None:
        return f"{THREAD_EVENT}: the pull request is not open, or the thread has no ids"
    return ProposalJob(**base, pr_number=number, thread=tid, thread_author=str(user.get("login") or ""), comment_id=cid,
                       author=str((last.get("user") or {}).get("login") or ""), reason=reason,
                       once=f"proposal:{tid}")
