"""GitHub REST for the App, on PyGithub 2.x.

App authentication is PyGithub's: a JWT signed RS256 with `iat` 60 s in the past, exchanged for
installation tokens that are cached until shortly before they expire. The private key is
parsed once per process (PyJWT would parse the PEM, ~30 ms of CPU, for every JWT). GitHub Enterprise works
through the base URL. Retries obey `Retry-After` and the rate-limit headers (PyGithub's
GithubRetry, extended to PATCH), and content-creating requests (POST / PATCH) go out at most
once per `write_interval_s` per installation, across every thread of the process.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import jwt
from cryptography.hazmat.primitives import serialization
from github import Auth, Github, GithubException, GithubRetry
from urllib3.util.retry import Retry

from bot.settings import ServiceSettings

PER_PAGE = 100
MAX_FILES = 3000  # GitHub lists at most 3,000 files of a pull request


class GitHubError(RuntimeError):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _WriteThrottle:
    """At most one content-creating request per interval per installation (process-wide)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[int, float] = {}

    def wait(self, installation_id: int, interval: float) -> None:
        if interval <= 0:
            return
        with self._lock:
            now = time.monotonic()
            at = max(now, self._next.get(installation_id, 0.0))
            self._next[installation_id] = at + interval
        if at > now:
            time.sleep(at - now)


_throttle = _WriteThrottle()
_clients: dict[tuple[str, int, int], Github] = {}
_clients_lock = threading.Lock()
_signers: dict[str, Callable[[dict[str, Any]], str]] = {}


def _jwt_signer(private_key_pem: str) -> Callable[[dict[str, Any]], str]:
    """RS256 signing with the key parsed once (the caller holds `_clients_lock`)."""
    sign = _signers.get(private_key_pem)
    if sign is None:
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)

        def sign(payload: dict[str, Any]) -> str:
            return jwt.encode(payload, key, algorithm="RS256")  # type: ignore[arg-type]

        _signers[private_key_pem] = sign
    return sign


def _retry(settings: ServiceSettings) -> Retry:
    return GithubRetry(
        total=settings.http_retries,
        backoff_factor=0.5,
        secondary_rate_wait=min(60.0, settings.max_retry_wait_s),
        max_rate_limit_wait=settings.max_retry_wait_s,
        allowed_methods=Retry.DEFAULT_ALLOWED_METHODS.union({"GET", "POST", "PATCH"}),
        respect_retry_after_header=True,
    )


class _InstallationAuth(Auth.AppInstallationAuth):
    """PyGithub's installation auth, asking for one token at a time: threads that start
    together (a job reads the PR's files, comments and configuration at once) would otherwise
    each ask GitHub for a token of their own."""

    def __init__(self, app_auth: Auth.AppAuth, installation_id: int) -> None:
        self._token_lock = threading.Lock()
        super().__init__(app_auth, installation_id)

    @property
    def token(self) -> str:
        with self._token_lock:
            return str(super().token)


def installation_github(settings: ServiceSettings, installation_id: int) -> Github:
    """A PyGithub client for one installation, shared by the process so its token is reused."""
    app_id, key = settings.require_app()
    cache_key = (settings.github_api_url, app_id, installation_id)
    with _clients_lock:
        gh = _clients.get(cache_key)
        if gh is None:
            auth = _InstallationAuth(Auth.AppAuth(app_id, sign_func=_jwt_signer(key)), installation_id)
            gh = Github(auth=auth, base_url=settings.github_api_url.rstrip("/"), per_page=PER_PAGE,
                        retry=_retry(settings), timeout=settings.http_timeout_s,
                        seconds_between_requests=None, seconds_between_writes=None)
            _clients[cache_key] = gh
        return gh


def forget_installation(settings: ServiceSettings, installation_id: int, stale: Github | None = None) -> None:
    """Drop the cached client (and its token), e.g. after GitHub refused the token; with
    `stale`, only if that is still the cached one (threads refused together renew it once)."""
    key = (settings.github_api_url, settings.app_id or 0, installation_id)
    with _clients_lock:
        if stale is None or _clients.get(key) is stale:
            _clients.pop(key, None)


def _iso(ts: datetime | None = None) -> str:
    return (ts or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHubClient:
    """The calls the jobs make, for one installation; raw JSON in and out."""

    def __init__(self, settings: ServiceSettings, installation_id: int) -> None:
        self.settings = settings
        self.installation_id = installation_id
        self.gh = installation_github(settings, installation_id)
        self.requests = 0

    # -- plumbing ---------------------------------------------------------------------------
    def _call(self, verb: str, url: str, params: dict[str, Any] | None = None,
              body: Any | None = None) -> tuple[dict[str, Any], Any]:
        if verb in ("POST", "PATCH", "PUT", "DELETE"):
            _throttle.wait(self.installation_id, self.settings.write_interval_s)
        self.requests += 1
        gh = self.gh  # the client this request used (another thread may replace self.gh)
        try:
            try:
                return gh.requester.requestJsonAndCheck(verb, url, parameters=params, input=body)
            except GithubException as e:
                if e.status != 401:
                    raise
                # the cached installation token was revoked or belongs to another server: once more
                forget_installation(self.settings, self.installation_id, stale=gh)
                self.gh = gh = installation_github(self.settings, self.installation_id)
                return gh.requester.requestJsonAndCheck(verb, url, parameters=params, input=body)
        except GithubException as e:
            msg = e.data.get("message") if isinstance(e.data, dict) else None
            raise GitHubError(f"GitHub answered {e.status} to {verb} {url}: {msg or e}", e.status) from None

    def _pages(self, url: str, params: dict[str, Any] | None = None, limit: int = MAX_FILES) -> Iterator[dict[str, Any]]:
        page, seen = 1, 0
        while True:
            headers, data = self._call("GET", url, {**(params or {}), "per_page": PER_PAGE, "page": page})
            items = data if isinstance(data, list) else []
            for item in items:
                yield item
                seen += 1
                if seen >= limit:
                    return
            link = headers.get("link") or headers.get("Link") or ""
            if 'rel="next"' not in link or not items:
                return
            page += 1

    # -- reads ------------------------------------------------------------------------------
    def pull_request(self, repo: str, number: int) -> dict[str, Any]:
        return dict(self._call("GET", f"/repos/{repo}/pulls/{number}")[1])

    def pr_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The PR's files, 100 per page, at most 3,000 (GitHub's limit)."""
        return list(self._pages(f"/repos/{repo}/pulls/{number}/files"))

    def review_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return list(self._pages(f"/repos/{repo}/pulls/{number}/comments", limit=10_000))

    def file_text(self, repo: str, path: str, ref: str) -> str | None:
        """A file's text at `ref`, or None when it is absent (or not a file)."""
        try:
            _, data = self._call("GET", f"/repos/{repo}/contents/{quote(path)}", {"ref": ref})
        except GitHubError as e:
            if e.status == 404:
                return None
            raise
        if not isinstance(data, dict) or data.get("type", "file") != "file" or "content" not in data:
            return None
        return base64.b64decode(data["content"]).decode("utf-8", "replace")

    def find_check_run(self, repo: str, head_sha: str, name: str) -> dict[str, Any] | None:
        _, data = self._call("GET", f"/repos/{repo}/commits/{head_sha}/check-runs",
                             {"check_name": name, "filter": "latest"})
        runs = (data or {}).get("check_runs") or []
        app_id = self.settings.app_id
        mine = [r for r in runs if not app_id or (r.get("app") or {}).get("id") in (None, app_id)]
        return dict(mine[0]) if mine else None

    # -- writes -----------------------------------------------------------------------------
    def create_check_run(self, repo: str, name: str, head_sha: str, *, external_id: str,
                         status: str = "queued", output: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "head_sha": head_sha, "status": status,
                                "external_id": external_id}
        if status == "in_progress":
            body["started_at"] = _iso()
        if output:
            body["output"] = output
        return dict(self._call("POST", f"/repos/{repo}/check-runs", body=body)[1])

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> dict[str, Any]:
        body = {k: v for k, v in fields.items() if v is not None}
        if body.get("status") == "in_progress":
            body.setdefault("started_at", _iso())
        if "conclusion" in body:
            body.setdefault("completed_at", _iso())
            body["status"] = "completed"
        return dict(self._call("PATCH", f"/repos/{repo}/check-runs/{check_run_id}", body=body)[1])
