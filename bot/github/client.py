"""The one GitHub REST client (httpx), for the App (installation tokens) and the Action
(GITHUB_TOKEN) alike: the calls the surfaces make (the protocol, bot/github/protocol.py), raw
JSON in and out, over one transport (bot/github/transport.py: the headers, the retry and
rate-limit policy, the write spacing, a 401's token renewal), with the same errors
(bot/github/errors.py). Lists are read page by page (bot/github/pages.py), files through the
contents API (bot/github/contents.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.github import contents
from bot.github.auth import Auth
from bot.github.pages import pages
from bot.github.settings import GitHubSettings
from bot.github.transport import Transport

MAX_FILES = 3000  # GitHub lists at most 3,000 files of a pull request
MAX_COMMENTS = 10_000
MAX_ANNOTATIONS_READ = 10_000  # of one check run, when a re-run completes it again


def _iso(ts: datetime | None = None) -> str:
    return (ts or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHubClient(Transport):
    """GitHub's REST API as one caller (`auth`) sees it; raw JSON in and out.

    `throttle_key`, `own_http`: as `Transport` takes them.
    `app_id`: the App whose check runs `find_check_run` returns (None: any).
    `author`: whether this caller wrote a listed item, by its identity (the App's bot; a token's,
    see `token_client`); None: unknown, so no item is this caller's."""

    def __init__(
        self,
        api_url: str,
        auth: Auth,
        settings: GitHubSettings | None = None,
        *,
        throttle_key: object = None,
        app_id: int | None = None,
        own_http: bool = False,
        author: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        super().__init__(api_url, auth, settings, throttle_key=throttle_key, own_http=own_http)
        self.app_id = app_id
        self.author = author

    # -- reads ------------------------------------------------------------------------------
    def pr_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The PR's files, 100 per page, at most 3,000 (GitHub's limit)."""
        return list(pages(self, f"/repos/{repo}/pulls/{number}/files", MAX_FILES))

    def changed_files(self, repo: str, number: int) -> int | None:
        """How many files the PR changes (its `changed_files`; the files list stops at 3,000)."""
        value = self.json("GET", f"/repos/{repo}/pulls/{number}").get("changed_files")
        return value if isinstance(value, int) else None

    def review_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return list(pages(self, f"/repos/{repo}/pulls/{number}/comments", MAX_COMMENTS))

    def issue_comments(self, repo: str, number: int, since: str, limit: int = MAX_COMMENTS) -> list[dict[str, Any]]:
        """The comments in a pull request's conversation updated at or after `since` (ISO 8601),
        oldest first, at most `limit`."""
        return list(pages(self, f"/repos/{repo}/issues/{int(number)}/comments", limit, since=since))

    def wrote(self, item: Mapping[str, Any]) -> bool:
        """Whether this caller wrote `item` (a comment as GitHub lists it): by its identity (the
        App's bot; a token's, asked of GitHub), so a marker another bot or a person copies counts
        for nothing; nothing is this caller's while its identity is unknown."""
        return self.author is not None and self.author(item)

    def review_comment_reactions(self, repo: str, comment_id: int) -> list[dict[str, Any]]:
        """The reactions to one review comment, each with its user (GitHub's "List reactions
        for a pull request review comment"), at most MAX_COMMENTS."""
        return list(pages(self, f"/repos/{repo}/pulls/comments/{int(comment_id)}/reactions", MAX_COMMENTS))

    def file_text(self, repo: str, path: str, ref: str, *, limit: int | None = None) -> str | None:
        """A file's text at `ref`, None when there is none; read only up to `limit` bytes, more
        raises HeadFileTooLarge (bot/github/contents.py)."""
        return contents.file_text(self, repo, path, ref, limit=limit)

    def config_text(self, repo: str, path: str, ref: str) -> str | None:
        """A settings file's text at `ref` (≤ 1 MB, UTF-8), None when there is no such file; any
        other failure raises GitHubError (bot/github/contents.py)."""
        return contents.config_text(self, repo, path, ref)

    def find_check_run(self, repo: str, head_sha: str, name: str) -> dict[str, Any] | None:
        """The latest check run of `name` on `head_sha` made by this App (any, without one)."""
        data = self.json(
            "GET",
            f"/repos/{repo}/commits/{head_sha}/check-runs",
            params={"check_name": name, "filter": "latest"},
        )
        runs = (data or {}).get("check_runs") or []
        mine = [
            r
            for r in runs
            if not self.app_id or (r.get("app") or {}).get("id") in (None, self.app_id)
        ]
        return dict(mine[0]) if mine else None

    # -- writes -----------------------------------------------------------------------------
    def create_check_run(
        self,
        repo: str,
        name: str,
        head_sha: str,
        *,
        external_id: str,
        status: str = "queued",
        output: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": name,
            "head_sha": head_sha,
            "status": status,
            "external_id": external_id,
        }
        if status == "in_progress":
            body["started_at"] = _iso()
        if output:
            body["output"] = output
        return dict(self.json("POST", f"/repos/{repo}/check-runs", json=body))

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> dict[str, Any]:
        """Fields that are None are left out; a conclusion completes the run."""
        body = {k: v for k, v in fields.items() if v is not None}
        if body.get("status") == "in_progress":
            body.setdefault("started_at", _iso())
        if "conclusion" in body:
            body.setdefault("completed_at", _iso())
            body["status"] = "completed"
        return dict(
            self.json("PATCH", f"/repos/{repo}/check-runs/{check_run_id}", json=body) or {}
        )

    # -- reviews ----------------------------------------------------------------------------
    def create_review(self, repo: str, number: int, body: dict[str, Any]) -> dict[str, Any]:
        """POST a pull request review (event, body, commit_id, comments) as it is given."""
        return dict(self.json("POST", f"/repos/{repo}/pulls/{number}/reviews", json=body) or {})

    def check_run_annotations(self, repo: str, check_run_id: int) -> list[dict[str, Any]]:
        """The annotations a check run shows (GitHub appends them on every update)."""
        return list(pages(self, f"/repos/{repo}/check-runs/{check_run_id}/annotations", MAX_ANNOTATIONS_READ))
