"""What the surfaces (App jobs, the Action, the context builder, reporters) may ask of GitHub:
one protocol, implemented by bot.github.client.GitHubClient for both kinds of token."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import httpx


class GitHub(Protocol):
    api_url: str  # the REST API's root, without a trailing slash
    throttle_key: object  # whose writes are spaced together (an installation, a token)

    def request(self, method: str, url: str, *, params: dict[str, Any] | None = None, json: Any = None,
                accept: str = "application/vnd.github+json", stream: bool = False) -> httpx.Response:
        """One call under the client's policy (bot/github/conversation.py's calls are made with it)."""

    def pr_files(self, repo: str, number: int) -> list[dict[str, Any]]: ...

    def changed_files(self, repo: str, number: int) -> int | None: ...

    def review_comments(self, repo: str, number: int) -> list[dict[str, Any]]: ...

    def issue_comments(self, repo: str, number: int, since: str, limit: int = ...) -> list[dict[str, Any]]: ...

    def review_comment_reactions(self, repo: str, comment_id: int) -> list[dict[str, Any]]: ...

    def wrote(self, item: Mapping[str, Any]) -> bool: ...

    def file_text(self, repo: str, path: str, ref: str, *, limit: int | None = None) -> str | None: ...

    def config_text(self, repo: str, path: str, ref: str) -> str | None: ...

    def find_check_run(self, repo: str, head_sha: str, name: str) -> dict[str, Any] | None: ...

    def create_check_run(
        self,
        repo: str,
        name: str,
        head_sha: str,
        *,
        external_id: str,
        status: str = "queued",
        output: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> dict[str, Any]: ...

    def create_review(self, repo: str, number: int, body: dict[str, Any]) -> dict[str, Any]: ...

    def check_run_annotations(self, repo: str, check_run_id: int) -> list[dict[str, Any]]: ...
