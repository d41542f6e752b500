"""When to retry a GitHub REST request and how long to wait: pure, one policy for every surface.

GitHub's guidance (docs.github.com, "Best practices for using the REST API" and "Rate limits
for the REST API"), in order:

- a rate-limit answer is a 403 or a 429 (a 403 that is no rate limit — a token without the
  permission — is an answer, never retried);
- `Retry-After` present: wait that many seconds;
- `x-ratelimit-remaining: 0` (the primary limit): wait until `x-ratelimit-reset` (UTC epoch
  seconds);
- otherwise (a secondary limit): wait at least a minute (`secondary_wait_s`), longer on each
  repeat;
- and give up with a clear error after a number of retries: here when the waits of one request
  would pass `max_retry_wait_s`, or after MAX_RATE_LIMIT_RETRIES.

5xx answers and network errors are retried `http_retries` times with exponential backoff.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.github.settings import GitHubSettings

MAX_RATE_LIMIT_RETRIES = 10
RESET_MARGIN_S = 1.0  # after x-ratelimit-reset: GitHub's clock and ours differ a little


@dataclass(frozen=True)
class Retry:
    wait_s: float
    why: str  # "secondary rate limit", "primary rate limit", "server error", ...


@dataclass(frozen=True)
class GiveUp:
    why: str  # appended to the error: what rtcbot would have had to wait, and the cap


@dataclass
class Attempts:
    """What one request has been through so far."""

    server_retries: int = 0  # 5xx and network errors
    limit_retries: int = 0  # rate limits
    secondary: int = 0  # secondary limits without Retry-After (for the doubling)
    waited_s: float = 0.0


def rate_limited(status: int, headers: Mapping[str, str], message: str) -> bool:
    """Whether an answer is one of GitHub's rate limits (403 or 429, with the signs of one)."""
    if status == 429:
        return True
    if status != 403:
        return False
    return (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining") == "0"
        or "rate limit" in message.lower()
    )


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def decide(
    settings: GitHubSettings,
    seen: Attempts,
    *,
    status: int | None,
    headers: Mapping[str, str] | None = None,
    message: str = "",
    now: float,
) -> Retry | GiveUp | None:
    """What to do after an answer (`status`; None: no answer, a network error): retry after a
    wait, give up (over the limits: the caller raises), or None (not retryable: the answer
    stands). `headers` must be case-insensitive (httpx's are) or lower-case. Updates `seen`
    when it says Retry."""
    headers = headers or {}
    if status is None or status >= 500:
        if seen.server_retries >= settings.http_retries:
            return None  # the last answer (or error) stands
        wait = settings.retry_backoff_s * 2**seen.server_retries
        why = "network error" if status is None else "server error"
        seen.server_retries += 1
    elif rate_limited(status, headers, message):
        retry_after = _seconds(headers.get("retry-after"))
        reset = _seconds(headers.get("x-ratelimit-reset"))
        if retry_after is not None:
            wait, why = retry_after, "rate limit (Retry-After)"
        elif headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            wait, why = (
                max(0.0, reset - now) + RESET_MARGIN_S,
                "primary rate limit (x-ratelimit-reset)",
            )
        else:
            wait = settings.secondary_wait_s * 2**seen.secondary
            why = "secondary rate limit"
        if seen.limit_retries >= MAX_RATE_LIMIT_RETRIES:
            return GiveUp(f"still rate limited after {seen.limit_retries} retries")
        if seen.waited_s + wait > settings.max_retry_wait_s:
            return GiveUp(
                f"{why}: waiting {wait:.0f} s more would pass the cap of "
                f"{settings.max_retry_wait_s:g} s (RTCBOT_MAX_RETRY_WAIT_S)"
            )
        seen.limit_retries += 1
        if why == "secondary rate limit":
            seen.secondary += 1
    else:
        return None
    seen.waited_s += wait
    return Retry(wait, why)
