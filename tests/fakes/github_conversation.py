"""The fake GitHub's conversation on a pull request (tests/fakes/github_server.py mixes it in):
comments in the conversation (issue comments) and their webhook payloads, replies in a review
comment's thread, reactions on both kinds of comment, and each user's permission on the
repository — what commands written to rtcbot need (bot/github/conversation.py).

    gh.permissions["carol"] = "write"                 # admin, maintain, write, triage, read, none
    c = gh.add_issue_comment(1, "@rtcbot help")      # by "alice", a User
    app.deliver("issue_comment", gh.issue_comment_event(1, c))
    gh.issue_comments[-1]["body"]                     # rtcbot's reply
    gh.comment_reactions("issue", c["id"])            # ["eyes", ...]
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

WEBHOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "github" / "webhooks"
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
# GitHub's `permission` for each role (`role_name`): maintain reads as write, triage as read
PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read",
              "none": "none"}
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")

Answer = tuple[int, Any, dict[str, str], int | None]


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def user_id(login: str) -> int:
    """The fake's id of a GitHub user (GitHub's example payloads' Codertocat keeps its own): the
    same on a pull request, a comment and a permission."""
    return 21031067 if login == "Codertocat" else zlib.crc32(login.encode()) or 1


def _user(login: str, user_type: str = "User") -> dict[str, Any]:
    return {"login": login, "id": user_id(login), "type": user_type}


class Conversation:
    """State and routes of the conversation; FakeGitHub calls `_init_conversation` and lists
    `conversation_routes` among its handlers."""

    repo: str
    bot: str  # the login the fake's tokens act as (FakeGitHub's)
    pulls: dict[int, Any]
    reactions: dict[int, list[dict[str, Any]]]
    _ids: itertools.count[int]
    _lock: threading.RLock

    def _init_conversation(self) -> None:
        self.issue_comments: list[dict[str, Any]] = []  # every pull request's conversation, in order
        self.issue_reactions: dict[int, list[dict[str, Any]]] = {}  # issue comment id → its reactions
        self.permissions: dict[str, str] = {}  # login → role; unlisted: read (404 for "ghost")
        self.permission_requests = 0

    def _error(self, status: int, message: str, errors: list[Any] | None = None,
               headers: dict[str, str] | None = None, inst: int | None = None) -> Answer:
        raise NotImplementedError

    def _fixture(self, event: str, name: str) -> dict[str, Any]:
        return dict(json.loads((WEBHOOKS / event / name).read_text(encoding="utf-8")))

    def _patch_common(self, p: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _page(self, items: list[Any], query: dict[str, str], path: str) -> Answer:
        raise NotImplementedError

    def pr_event(self, action: str, number: int) -> dict[str, Any]:
        raise NotImplementedError

    add_comment: Callable[..., dict[str, Any]]  # FakeGitHub's: a review comment on a pull request

    @property
    def base_url(self) -> str:  # FakeGitHub's: where it listens
        raise NotImplementedError

    # -- setup and payloads -----------------------------------------------------------------
    def add_issue_comment(self, number: int, body: str, user: str = "alice", user_type: str = "User") -> dict[str, Any]:
        """A comment in pull request `number`'s conversation, as GitHub lists it."""
        cid = next(self._ids)
        c = {"id": cid, "node_id": f"IC_{cid}", "body": body, "user": _user(user, user_type),
             "url": f"{self.base_url}/repos/{self.repo}/issues/comments/{cid}",
             "html_url": f"https://github.com/{self.repo}/pull/{number}#issuecomment-{cid}",
             "issue_url": f"{self.base_url}/repos/{self.repo}/issues/{number}",
             "created_at": _iso(time.time()), "updated_at": _iso(time.time()),
             "author_association": "CONTRIBUTOR", "performed_via_github_app": None, "number": number}
        with self._lock:
            self.issue_comments.append(c)
        return c

    def issue_comment_event(self, number: int, comment: dict[str, Any], action: str = "created") -> dict[str, Any]:
        """An `issue_comment` payload from GitHub's example, on pull request `number` (its
        `issue.pull_request` set, as for any comment in a pull request's conversation)."""
        pr = self.pulls[number]
        p = self._patch_common(self._fixture("issue_comment", "created.payload.json"))
        p["action"] = action
        p["issue"].update(number=number, state=pr.state,
                          pull_request={"url": f"{self.base_url}/repos/{self.repo}/pulls/{number}"})
        p["comment"] = {**p["comment"], **{k: v for k, v in comment.items() if k != "number"}}
        return p

    def thread_event(self, number: int, comments: list[dict[str, Any]], action: str = "resolved") -> dict[str, Any]:
        """A `pull_request_review_thread` payload: the thread of `comments` (its first comment
        first) on pull request `number`, resolved or unresolved."""
        p = self.pr_event("opened", number)  # its repository, installation and pull request
        p["action"] = action
        p["thread"] = {"node_id": f"PRRT_{comments[0]['id']}", "comments": [dict(c) for c in comments]}
        return p

    def reply_in_thread(self, number: int, top: dict[str, Any], body: str, user: str = "alice") -> dict[str, Any]:
        """A person's reply in the thread of review comment `top`."""
        c = self.add_comment(number, top["path"], top["line"], body, user=user)
        c["in_reply_to_id"] = top["id"]
        return c

    def comment_reactions(self, kind: str, comment_id: int) -> list[str]:
        """The reactions' contents on a comment ("issue" or "review"), in order."""
        with self._lock:
            found = (self.issue_reactions if kind == "issue" else self.reactions).get(comment_id, [])
            return [r["content"] for r in found]

    # -- routes -----------------------------------------------------------------------------
    def conversation_routes(self) -> list[tuple[str, str, Any]]:
        return [
            ("GET", r"/collaborators/([^/]+)/permission", self._get_permission),
            ("POST", r"/issues/comments/(\d+)/reactions", self._react_issue_comment),
            ("POST", r"/pulls/comments/(\d+)/reactions", self._react_review_comment),
            ("POST", r"/issues/(\d+)/comments", self._create_issue_comment),
            ("GET", r"/issues/(\d+)/comments", self._list_issue_comments),
            ("POST", r"/pulls/(\d+)/comments/(\d+)/replies", self._create_reply),
        ]

    def _get_permission(self, username: str, **_: Any) -> Answer:
        with self._lock:
            self.permission_requests += 1
            role = self.permissions.get(username, "read")
        if username == "ghost":
            return self._error(404, "Not Found")
        return 200, {"permission": PERMISSION[role], "role_name": role, "user": _user(username)}, {}, None

    def _reaction(self, found: dict[int, list[dict[str, Any]]], cid: int, body: Any) -> Answer:
        content = (body or {}).get("content") if isinstance(body, dict) else None
        if content not in REACTIONS:
            return self._error(422, "Validation Failed", [{"message": f"content {content!r} is not valid"}])
        rid = next(self._ids)
        r = {"id": rid, "node_id": f"REA_{rid}", "content": content, "created_at": _iso(time.time()),
             "user": _user(self.bot, "Bot")}
        with self._lock:
            found.setdefault(cid, []).append(r)
        return 201, r, {}, None

    def _react_issue_comment(self, comment_id: str, body: Any, **_: Any) -> Answer:
        cid = int(comment_id)
        if not any(c["id"] == cid for c in self.issue_comments):
            return self._error(404, "Not Found")
        return self._reaction(self.issue_reactions, cid, body)

    def _react_review_comment(self, comment_id: str, body: Any, **_: Any) -> Answer:
        cid = int(comment_id)
        if not any(c["id"] == cid for pr in self.pulls.values() for c in pr.comments):
            return self._error(404, "Not Found")
        return self._reaction(self.reactions, cid, body)

    def _list_issue_comments(self, number: str, query: dict[str, str], **_: Any) -> Answer:
        """A pull request's conversation, oldest first; `since`: those updated at or after it."""
        if int(number) not in self.pulls:
            return self._error(404, "Not Found")
        since = query.get("since")
        with self._lock:
            items = [{k: v for k, v in c.items() if k != "number"} for c in self.issue_comments
                     if c["number"] == int(number) and (since is None or c["updated_at"] >= since)]
        status, chunk, headers, inst = self._page(items, query, f"/issues/{number}/comments")
        if since and "Link" in headers:  # GitHub's next link keeps the query
            headers = {"Link": headers["Link"].replace("?per_page=", f"?since={since}&per_page=")}
        return status, chunk, headers, inst

    def _create_issue_comment(self, number: str, body: Any, **_: Any) -> Answer:
        if int(number) not in self.pulls:
            return self._error(404, "Not Found")
        if not isinstance(body, dict) or not isinstance(body.get("body"), str) or len(body["body"]) > 65536:
            return self._error(422, "Validation Failed", [{"message": "body is missing or too long"}])
        c = self.add_issue_comment(int(number), body["body"], user=self.bot, user_type="Bot")
        return 201, {k: v for k, v in c.items() if k != "number"}, {}, None

    def _create_reply(self, number: str, comment_id: str, body: Any, **_: Any) -> Answer:
        """A reply in a review comment's thread: GitHub takes the id of the thread's first
        comment only (a reply to a reply is refused)."""
        pr = self.pulls.get(int(number))
        top = next((c for c in (pr.comments if pr else []) if c["id"] == int(comment_id)), None)
        if pr is None or top is None:
            return self._error(404, "Not Found")
        if top.get("in_reply_to_id"):
            return self._error(422, "Validation Failed", [{"message": "replies to replies are not supported"}])
        if not isinstance(body, dict) or not isinstance(body.get("body"), str) or len(body["body"]) > 65536:
            return self._error(422, "Validation Failed", [{"message": "body is missing or too long"}])
        c = self.add_comment(pr.number, top["path"], top["line"], body["body"], user=self.bot, user_type="Bot")
        c["in_reply_to_id"] = top["id"]
        return 201, dict(c), {}, None
