"""The one GitHub REST client (httpx), for the App (installation tokens) and the Action
(GITHUB_TOKEN) alike: the same headers (`X-GitHub-Api-Version: 2022-11-28` on every request),
the same retry and rate-limit policy (bot/github/policy.py), the same errors, the same calls.

Content-creating requests (POST, PATCH, PUT, DELETE) of one installation (or token) go out at
most once per `write_interval_s`, across every thread of the process. A 401 renews an
installation token once (revoked, or from another server). Pagination follows GitHub's `Link`
headers, never off the API's own origin (the token would go with it).
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from analyzers.context import HeadFileTooLarge
from bot.github.auth import Auth
from bot.github.policy import Attempts, GiveUp, Retry, decide
from bot.github.settings import GitHubSettings

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
JSON = "application/vnd.github+json"
RAW = "application/vnd.github.raw+json"
USER_AGENT = "rtcbot"
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
PER_PAGE = 100
MAX_FILES = 3000  # GitHub lists at most 3,000 files of a pull request
MAX_COMMENTS = 10_000
MAX_CONFIG_BYTES = 1024 * 1024
MAX_ANNOTATIONS_READ = 10_000  # of one check run, when a re-run completes it again


class GitHubError(RuntimeError):
    """GitHub refused a request (after the retries the policy allows), or could not be reached
    (status 0). One line: "GitHub answered 404: Not Found"."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        method: str = "",
        path: str = "",
        codes: tuple[str, ...] = (),
    ) -> None:
        text = (
            f"GitHub answered {status}: {message}"
            if status
            else f"could not reach GitHub ({method} {path}): {message}"
        )
        super().__init__(text)
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        self.codes = codes  # the `errors[].code`s of GitHub's answer ("too_large", ...)


class _WriteThrottle:
    """At most one content-creating request per interval per key (process-wide)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[object, float] = {}

    def wait(self, key: object, interval: float) -> None:
        if interval <= 0:
            return
        with self._lock:
            now = time.monotonic()
            at = max(now, self._next.get(key, 0.0))
            self._next[key] = at + interval
        if at > now:
            time.sleep(at - now)


_throttle = _WriteThrottle()
_http: dict[tuple[str, float], httpx.Client] = {}
_http_lock = threading.Lock()


def shared_http(api_url: str, timeout_s: float) -> httpx.Client:
    """One pooled HTTP client per API root and timeout, for the whole process (a client costs
    milliseconds of CPU to make; its connections are kept alive between jobs)."""
    key = (api_url, timeout_s)
    with _http_lock:
        http = _http.get(key)
        if http is None:
            http = _http[key] = _new_http(api_url, timeout_s)
        return http


def _new_http(api_url: str, timeout_s: float) -> httpx.Client:
    return httpx.Client(
        base_url=api_url,
        timeout=timeout_s,
        headers={"Accept": JSON, "X-GitHub-Api-Version": API_VERSION, "User-Agent": USER_AGENT},
    )


def _iso(ts: datetime | None = None) -> str:
    return (ts or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _message(r: httpx.Response) -> str:
    try:
        data = r.json()
    except ValueError:
        return r.text[:200] or r.reason_phrase
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:500]
    return r.text[:200] or r.reason_phrase


def _codes(r: httpx.Response) -> tuple[str, ...]:
    """The `code`s of a refusal's `errors` list (GitHub's machine-readable reasons)."""
    try:
        errors = r.json().get("errors")
    except (ValueError, AttributeError):
        return ()
    if not isinstance(errors, list):
        return ()
    return tuple(str(e["code"]) for e in errors if isinstance(e, dict) and e.get("code"))


def _transport_wait(settings: GitHubSettings, seen: Attempts, e: httpx.TransportError, method: str,
                    url: str) -> float:
    """The seconds to wait before trying again after GitHub could not be reached; GitHubError
    (status 0) when the policy says to stop."""
    step = decide(settings, seen, status=None, now=time.time())
    if not isinstance(step, Retry):
        raise GitHubError(0, f"{type(e).__name__}: {e}", method=method, path=url) from None
    log.warning("GitHub: %s on %s %s; retrying in %.1f s", type(e).__name__, method, url, step.wait_s)
    return step.wait_s


def _refusal_wait(settings: GitHubSettings, seen: Attempts, r: httpx.Response, method: str, url: str) -> float:
    """The seconds to wait before asking again after GitHub refused (status >= 400); GitHubError
    when the policy says not to ask again."""
    message = _message(r)
    step = decide(settings, seen, status=r.status_code, headers=r.headers, message=message, now=time.time())
    if isinstance(step, Retry):
        log.warning("GitHub answered %s to %s %s (%s); retrying in %.1f s",
                    r.status_code, method, url, step.why, step.wait_s)
        return step.wait_s
    if isinstance(step, GiveUp):
        message = f"{message} (rtcbot gave up: {step.why})"
    raise GitHubError(r.status_code, message, method=method, path=url, codes=_codes(r))


class GitHubClient:
    """GitHub's REST API as one caller (`auth`) sees it; raw JSON in and out.

    `throttle_key`: whose writes are spaced (an installation id, the token); None: not spaced.
    `own_http`: connections of its own (closed by `close`), else the process's shared pool.
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
        self.api_url = api_url.rstrip("/")
        self.auth = auth
        self.settings = settings or GitHubSettings()
        self.throttle_key = throttle_key
        self.app_id = app_id
        self.author = author
        self._own_http = own_http
        self.http = (
            _new_http(self.api_url, self.settings.http_timeout_s)
            if own_http
            else shared_http(self.api_url, self.settings.http_timeout_s)
        )
        self.requests = 0

    def close(self) -> None:
        """Closes the connections of a client made with `own_http` (a shared one stays)."""
        if self._own_http:
            self.http.close()

    # -- plumbing ---------------------------------------------------------------------------
    def request(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        accept: str = JSON,
        stream: bool = False,
    ) -> httpx.Response:
        """One request under the policy: the answer (< 400), or GitHubError. `stream`: the
        answer's body is not read yet (the caller reads it and closes the answer)."""
        if method in WRITES and self.throttle_key is not None:
            _throttle.wait(self.throttle_key, self.settings.write_interval_s)
        seen = Attempts()
        renewed = False
        while True:
            header = self.auth.header()
            self.requests += 1
            try:
                r = self.http.send(self.http.build_request(
                    method, url, params=params, json=json, headers={"Authorization": header, "Accept": accept},
                ), stream=stream)
                if r.status_code >= 400:
                    r.read()  # a refusal is read whole, as GitHub's error object
            except httpx.TransportError as e:  # connection refused or reset, timeouts
                time.sleep(_transport_wait(self.settings, seen, e, method, url))
                continue
            if r.status_code < 400:
                return r
            if r.status_code == 401 and not renewed and self.auth.renew(header):
                renewed = True  # a revoked or foreign installation token: a new one, once
                continue
            time.sleep(_refusal_wait(self.settings, seen, r, method, url))

    def _json(self, method: str, url: str, **kw: Any) -> Any:
        r = self.request(method, url, **kw)
        if not r.content:
            return None
        try:
            return r.json()
        except ValueError:
            raise GitHubError(
                r.status_code, f"expected JSON from {method} {url}", method=method, path=url
            ) from None

    def _pages(self, url: str, limit: int, **query: Any) -> Iterator[dict[str, Any]]:
        """The items of a list endpoint, 100 a page, following `Link: rel="next"`."""
        origin = urlsplit(self.api_url)[:2]
        params: dict[str, Any] | None = {**query, "per_page": PER_PAGE}
        next_url: str | None = url
        seen = 0
        while next_url:
            r = self.request("GET", next_url, params=params)
            data = r.json()
            if not isinstance(data, list):
                raise GitHubError(
                    r.status_code, f"expected a list from {url}", method="GET", path=url
                )
            for item in data:
                yield item
                seen += 1
                if seen >= limit:
                    return
            next_url = r.links.get("next", {}).get("url") if data else None
            if next_url and urlsplit(next_url)[:2] != origin:
                raise GitHubError(
                    r.status_code,
                    f"the next page of {url} is off the API ({next_url})",
                    method="GET",
                    path=url,
                )
            params = None  # the next link carries them

    # -- reads ------------------------------------------------------------------------------
    def pr_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The PR's files, 100 per page, at most 3,000 (GitHub's limit)."""
        return list(self._pages(f"/repos/{repo}/pulls/{number}/files", MAX_FILES))

    def changed_files(self, repo: str, number: int) -> int | None:
        """How many files the PR changes (its `changed_files`; the files list stops at 3,000)."""
        value = self._json("GET", f"/repos/{repo}/pulls/{number}").get("changed_files")
        return value if isinstance(value, int) else None

    def review_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return list(self._pages(f"/repos/{repo}/pulls/{number}/comments", MAX_COMMENTS))

    def issue_comments(self, repo: str, number: int, since: str, limit: int = MAX_COMMENTS) -> list[dict[str, Any]]:
        """The comments in a pull request's conversation updated at or after `since` (ISO 8601),
        oldest first, at most `limit`."""
        return list(self._pages(f"/repos/{repo}/issues/{int(number)}/comments", limit, since=since))

    def wrote(self, item: Mapping[str, Any]) -> bool:
        """Whether this caller wrote `item` (a comment as GitHub lists it): by its identity (the
        App's bot; a token's, asked of GitHub), so a marker another bot or a person copies counts
        for nothing; nothing is this caller's while its identity is unknown."""
        return self.author is not None and self.author(item)

    def review_comment_reactions(self, repo: str, comment_id: int) -> list[dict[str, Any]]:
        """The reactions to one review comment, each with its user (GitHub's "List reactions
        for a pull request review comment"), at most MAX_COMMENTS."""
        return list(self._pages(f"/repos/{repo}/pulls/comments/{int(comment_id)}/reactions", MAX_COMMENTS))

    def file_text(self, repo: str, path: str, ref: str, *, limit: int | None = None) -> str | None:
        """A file's text at `ref`, or None when there is no such file, it is a folder (or a
        submodule), or it is over GitHub's 100 MB (`too_large`); other failures raise
        GitHubError. The path is percent-encoded (`#`, `?`, `%`, spaces, non-ASCII).

        The JSON form comes first: a file of up to 1 MB in it, a larger one described by its
        `size` alone (`encoding: none`), then read with the raw media type. Over `limit` bytes
        (None: GitHub's 100 MB) it raises HeadFileTooLarge: by the `size` GitHub gives, before
        its bytes are asked for, and a raw read stops one byte past the limit whatever the
        size said (a branch `ref` may move between the two requests)."""
        url = f"/repos/{repo}/contents/{quote(path)}"
        try:
            data = self._json("GET", url, params={"ref": ref})
            if not isinstance(data, dict) or data.get("type") != "file":
                return None  # a folder is a list; a submodule, or a symlink out of the tree, a description
            size = int(data.get("size") or 0)
            if limit is not None and size > limit:
                raise HeadFileTooLarge(size, limit)
            if data.get("encoding") == "base64":
                return base64.b64decode(str(data.get("content") or "")).decode("utf-8", "replace")
            return self._raw_text(url, ref, size, limit)
        except GitHubError as e:
            if e.status == 404:
                return None
            if e.status == 403 and "too_large" in e.codes:
                log.warning("GitHub will not serve %s at %s: %s", path, ref[:12], e.message)
                return None
            raise

    def _raw_text(self, url: str, ref: str, size: int, limit: int | None) -> str:
        """A file's text with the raw media type, read only up to `limit` bytes."""
        got = bytearray()
        r = self.request("GET", url, params={"ref": ref}, accept=RAW, stream=True)
        try:
            for chunk in r.iter_bytes():
                got += chunk
                if limit is not None and len(got) > limit:
                    sent = "" if "content-encoding" in r.headers else r.headers.get("content-length", "")
                    raise HeadFileTooLarge(max(len(got), size, int(sent) if sent.isdigit() else 0), limit)
        finally:
            r.close()  # the rest of a file over the limit is never read: its connection goes
        return got.decode("utf-8", "replace")

    def config_text(self, repo: str, path: str, ref: str) -> str | None:
        """A settings file's text at `ref` (the JSON form, ≤ 1 MB, UTF-8), None when there is no
        such file; any other failure raises GitHubError (never silently the defaults)."""
        try:
            r = self.request("GET", f"/repos/{repo}/contents/{quote(path)}", params={"ref": ref})
        except GitHubError as e:
            if e.status == 404:
                return None
            raise
        data = r.json()
        where = f"{path} at {ref[:12]}"
        if not isinstance(data, dict) or data.get("type") != "file":
            raise GitHubError(r.status_code, f"{where} is not a file")
        if data.get("encoding") != "base64" or int(data.get("size") or 0) > MAX_CONFIG_BYTES:
            raise GitHubError(
                r.status_code, f"{where} is larger than {MAX_CONFIG_BYTES // 1024} KB"
            )
        try:
            return base64.b64decode(str(data.get("content") or "")).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise GitHubError(r.status_code, f"{where} is not UTF-8 text") from None

    def find_check_run(self, repo: str, head_sha: str, name: str) -> dict[str, Any] | None:
        """The latest check run of `name` on `head_sha` made by this App (any, without one)."""
        data = self._json(
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
        return dict(self._json("POST", f"/repos/{repo}/check-runs", json=body))

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> dict[str, Any]:
        """Fields that are None are left out; a conclusion completes the run."""
        body = {k: v for k, v in fields.items() if v is not None}
        if body.get("status") == "in_progress":
            body.setdefault("started_at", _iso())
        if "conclusion" in body:
            body.setdefault("completed_at", _iso())
            body["status"] = "completed"
        return dict(
            self._json("PATCH", f"/repos/{repo}/check-runs/{check_run_id}", json=body) or {}
        )

    # -- reviews ----------------------------------------------------------------------------
    def create_review(self, repo: str, number: int, body: dict[str, Any]) -> dict[str, Any]:
        """POST a pull request review (event, body, commit_id, comments) as it is given."""
        return dict(self._json("POST", f"/repos/{repo}/pulls/{number}/reviews", json=body) or {})

    def check_run_annotations(self, repo: str, check_run_id: int) -> list[dict[str, Any]]:
        """The annotations a check run shows (GitHub appends them on every update)."""
        return list(self._pages(f"/repos/{repo}/check-runs/{check_run_id}/annotations", MAX_ANNOTATIONS_READ))
