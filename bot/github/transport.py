"""One request to GitHub's REST API under the policy, for one caller (`auth`): the same headers
(`X-GitHub-Api-Version: 2022-11-28` on every request), the same retries and rate-limit waits
(bot/github/policy.py), the same errors (bot/github/errors.py).

Content-creating requests (POST, PATCH, PUT, DELETE) of one installation (or token) go out at
most once per `write_interval_s`, across every thread of the process. A 401 renews an
installation token once (revoked, or from another server). Connections are pooled per API
root and timeout for the whole process, unless a caller asks for its own.
"""

from __future__ import annotations

import functools
import logging
import ssl
import threading
import time
from typing import Any

import httpx

from bot.github.auth import Auth
from bot.github.errors import GitHubError, refusal_codes, refusal_message
from bot.github.policy import Attempts, GiveUp, Retry, decide
from bot.github.settings import GitHubSettings

log = logging.getLogger("bot.github.client")  # the client's lines, under the name they always had

API_VERSION = "2022-11-28"
JSON = "application/vnd.github+json"
USER_AGENT = "rtcbot"
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})


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


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The trust store of the process's connections to GitHub: httpx's default (certifi's CAs,
    or SSL_CERT_FILE / SSL_CERT_DIR when set), made once. Reading the CA bundle is most of what
    a new client costs (~45 ms of CPU); a made context is only read, by any client and thread."""
    return httpx.create_ssl_context()


def _new_http(api_url: str, timeout_s: float) -> httpx.Client:
    return httpx.Client(
        base_url=api_url,
        timeout=timeout_s,
        headers={"Accept": JSON, "X-GitHub-Api-Version": API_VERSION, "User-Agent": USER_AGENT},
        verify=tls_context(),
    )


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
    message = refusal_message(r)
    step = decide(settings, seen, status=r.status_code, headers=r.headers, message=message, now=time.time())
    if isinstance(step, Retry):
        log.warning("GitHub answered %s to %s %s (%s); retrying in %.1f s",
                    r.status_code, method, url, step.why, step.wait_s)
        return step.wait_s
    if isinstance(step, GiveUp):
        message = f"{message} (rtcbot gave up: {step.why})"
    raise GitHubError(r.status_code, message, method=method, path=url, codes=refusal_codes(r))


class Transport:
    """Requests to GitHub as one caller (`auth`) makes them; raw answers in and out.

    `throttle_key`: whose writes are spaced (an installation id, the token); None: not spaced.
    `own_http`: connections of its own (closed by `close`), else the process's shared pool."""

    def __init__(
        self,
        api_url: str,
        auth: Auth,
        settings: GitHubSettings | None = None,
        *,
        throttle_key: object = None,
        own_http: bool = False,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.auth = auth
        self.settings = settings or GitHubSettings()
        self.throttle_key = throttle_key
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

    def json(self, method: str, url: str, **kw: Any) -> Any:
        """The JSON of the answer to one request (None for an empty one); GitHubError when it
        is not JSON."""
        r = self.request(method, url, **kw)
        if not r.content:
            return None
        try:
            return r.json()
        except ValueError:
            raise GitHubError(
                r.status_code, f"expected JSON from {method} {url}", method=method, path=url
            ) from None
