"""How rtcbot talks to GitHub's REST API: timeouts, retries, rate-limit waits, write spacing.

The same settings, and the same policy (bot/github/policy.py), serve the App and the Action;
from the environment with the `RTCBOT_` prefix (e.g. RTCBOT_MAX_RETRY_WAIT_S).
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict


class GitHubSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    http_timeout_s: float = Field(default=30.0, gt=0)
    # 5xx answers and network errors: retried this many times, waiting retry_backoff_s, then
    # twice that, ... (rate limits are bounded by max_retry_wait_s instead)
    http_retries: int = Field(default=3, ge=0, le=10)
    retry_backoff_s: float = Field(default=0.5, ge=0)
    # a secondary rate limit without Retry-After: wait this long, doubling on each repeat
    # (GitHub: "wait for at least one minute")
    secondary_wait_s: float = Field(default=60.0, ge=0)
    # the most one request may spend waiting for GitHub's limits; beyond it, a clear error
    max_retry_wait_s: float = Field(default=300.0, ge=0)
    # content-creating requests (POST, PATCH, PUT, DELETE) per installation or token: at
    # most one per interval, process-wide (GitHub: at most 80 a minute)
    write_interval_s: float = Field(default=1.0, ge=0)


class GitHubSettingsError(ValueError):
    """GitHub settings that do not validate: pydantic's `error`, which the surface says in its
    plain words (bot/core/settings_env.py `error_lines`), one line per bad value."""

    def __init__(self, error: ValidationError) -> None:
        super().__init__(str(error))
        self.error = error


class AppSettings(Protocol):
    """What the App's client asks of its settings (bot/app/settings.py `ServiceSettings` has
    it, and GitHubSettings' fields): the API's URL, the App's id, and its id and private key
    where they are needed (`require_app`: a ValueError saying which is missing)."""

    @property
    def github_api_url(self) -> str: ...

    @property
    def app_id(self) -> int | None: ...

    def require_app(self) -> tuple[int, str]: ...


def load_github_settings(*, action: bool = False, **overrides: Any) -> GitHubSettings:
    """The settings from the environment (GitHubSettingsError when a value is bad).

    `action`: the Action's few writes (one check run per analysis, then its output) are not
    spaced unless RTCBOT_WRITE_INTERVAL_S says so."""
    if action and "RTCBOT_WRITE_INTERVAL_S" not in os.environ:
        overrides.setdefault("write_interval_s", 0.0)
    try:
        return GitHubSettings(**overrides)
    except ValidationError as e:
        raise GitHubSettingsError(e) from None
