"""The calls of a conversation on a pull request (commands people write to rtcbot): who may ask
(a user's permission on the repository, cached briefly), a reaction on a comment, a reply in
the pull request's conversation or in a review comment's thread, and the pull request itself.
Over the one client (bot/github/client.py): its headers, retries, limits and errors.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Literal
from urllib.parse import quote

from bot.github.errors import GitHubError
from bot.github.protocol import GitHub

CommentKind = Literal["issue", "review"]  # a comment in the conversation, or on a line (a review comment)
PERMISSION_TTL_S = 60.0  # how long a user's permission is taken as known (RTCBOT_PERMISSION_CACHE_S)
WRITERS = frozenset({"admin", "maintain", "write"})
MAX_REPLY_CHARS = 60_000  # GitHub takes at most 65,536 characters in a comment's body

_permissions: dict[tuple[str, object, str, str], tuple[float, str]] = {}
_permissions_lock = threading.Lock()


class Conversation:
    """One repository's conversation calls, through `client` (an installation's or a token's)."""

    def __init__(self, client: GitHub, repo: str, permission_ttl_s: float = PERMISSION_TTL_S) -> None:
        self.client = client
        self.repo = repo
        self.permission_ttl_s = permission_ttl_s

    def permission(self, login: str) -> str:
        """The user's role on the repository: admin, maintain, write, triage, read or none
        (GitHub's `role_name`; `permission` where it has none); asked at most once per
        `permission_ttl_s` per user and repository. A user GitHub does not know (404) has none."""
        key = (self.client.api_url, self.client.throttle_key, self.repo, login.lower())
        now = time.monotonic()
        with _permissions_lock:
            found = _permissions.get(key)
        if found is not None and now - found[0] < self.permission_ttl_s:
            return found[1]
        try:
            data = self.client.request("GET", f"/repos/{self.repo}/collaborators/{quote(login, safe='')}/permission"
                                       ).json()
        except GitHubError as e:
            if e.status != 404:
                raise
            data = {}
        role = str((data or {}).get("role_name") or (data or {}).get("permission") or "none").lower()
        with _permissions_lock:
            _permissions[key] = (now, role)
        return role

    def can_write(self, login: str) -> bool:
        return self.permission(login) in WRITERS

    def react(self, kind: CommentKind, comment_id: int, content: str) -> None:
        """A reaction (`eyes`, `+1`, `confused`, …) on a comment."""
        where = "issues" if kind == "issue" else "pulls"
        self.client.request("POST", f"/repos/{self.repo}/{where}/comments/{int(comment_id)}/reactions",
                            json={"content": content})

    def reply(self, kind: CommentKind, pr_number: int, comment_id: int, body: str) -> dict[str, Any]:
        """An answer to a comment: in the conversation (an issue comment), or in the review
        comment's thread (GitHub's replies endpoint: a reply to a reply goes to the thread)."""
        body = body if len(body) <= MAX_REPLY_CHARS else body[:MAX_REPLY_CHARS] + "\n\n… (cut)"
        if kind == "issue":
            url = f"/repos/{self.repo}/issues/{int(pr_number)}/comments"
        else:
            url = f"/repos/{self.repo}/pulls/{int(pr_number)}/comments/{int(comment_id)}/replies"
        return dict(self.client.request("POST", url, json={"body": body}).json() or {})

    def pull(self, pr_number: int) -> dict[str, Any]:
        """The pull request as GitHub describes it (its state and head)."""
        return dict(self.client.request("GET", f"/repos/{self.repo}/pulls/{int(pr_number)}").json() or {})
