"""Service settings for the GitHub App (`rtcbot serve`, `rtcbot worker`), from the environment.

Everything is prefixed `RTCBOT_` except the two URLs every platform already names:
`DATABASE_URL` (SQLAlchemy URL; default a SQLite file in the data directory) and `REDIS_URL`
(the job queue; default a SQLite-backed huey queue in the data directory).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from analyzers.llm import LLMSettings
from analyzers.registry import DEFAULT_ANALYZERS

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB


def _default_data_dir() -> Path:
    root = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return Path(root) / "rtcbot"


class SettingsError(ValueError):
    """A service setting is missing or wrong (one clear line)."""


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    webhook_secret: str | None = None
    app_id: int | None = None
    private_key: str | None = None
    private_key_path: Path | None = None
    github_api_url: str = "https://api.github.com"

    database_url: str | None = Field(default=None, validation_alias=AliasChoices("DATABASE_URL", "RTCBOT_DATABASE_URL"))
    redis_url: str | None = Field(default=None, validation_alias=AliasChoices("REDIS_URL", "RTCBOT_REDIS_URL"))
    data_dir: Path = Field(default_factory=_default_data_dir)

    # LLM (the installation's endpoint; none → the embedded model)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_concurrency: int = 4
    llm_max_requests: int | None = None  # per job
    allowed_models: Annotated[list[str], NoDecode] = Field(default_factory=list)  # models a repository may pick

    # behaviour
    analyzers: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_ANALYZERS))
    comment_analyzers: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["crscore"])
    process_drafts: bool = False
    max_body_bytes: int = MAX_BODY_BYTES

    # GitHub client
    write_interval_s: float = 1.0  # content-creating requests per installation: at most one a second
    http_timeout_s: int = 30
    http_retries: int = 5
    max_retry_wait_s: float = 300.0

    # worker
    workers: int = 2
    heartbeat_s: float = 10.0
    stale_after_s: float = 60.0  # a running job without a heartbeat this long is abandoned
    requeue_after_s: float = 600.0  # a queued job nobody picked up this long is enqueued again
    sweep_interval_s: float = 30.0
    max_attempts: int = 3

    @field_validator("allowed_models", "analyzers", "comment_analyzers", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        if isinstance(v, str):
            if v.strip().startswith("["):
                return json.loads(v)
            return [x.strip() for x in v.split(",") if x.strip()]
        return v

    # -- derived ----------------------------------------------------------------------------
    def database(self) -> str:
        if self.database_url:
            url = self.database_url
            # Heroku-style postgres:// URLs: use psycopg 3.
            for prefix in ("postgres://", "postgresql://"):
                if url.startswith(prefix):
                    return "postgresql+psycopg://" + url[len(prefix):]
            return url
        return f"sqlite:///{self.data_dir / 'rtcbot.sqlite3'}"

    def private_key_pem(self) -> str:
        if self.private_key:
            return self.private_key.replace("\\n", "\n")
        if self.private_key_path:
            try:
                return self.private_key_path.read_text(encoding="utf-8")
            except OSError as e:
                raise SettingsError(f"cannot read RTCBOT_PRIVATE_KEY_PATH {self.private_key_path}: {e.strerror}") from None
        raise SettingsError("no GitHub App private key: set RTCBOT_PRIVATE_KEY or RTCBOT_PRIVATE_KEY_PATH")

    def require_app(self) -> tuple[int, str]:
        if not self.app_id:
            raise SettingsError("no GitHub App id: set RTCBOT_APP_ID")
        return self.app_id, self.private_key_pem()

    def llm_settings(self, model: str | None = None) -> LLMSettings:
        return LLMSettings(
            base_url=self.llm_base_url,
            model=model or self.llm_model,
            api_key=self.llm_api_key,
            max_concurrency=self.llm_concurrency,
            max_requests=self.llm_max_requests,
            cache_path=None,  # the store is the cache
        )


def load_settings(**overrides: Any) -> ServiceSettings:
    return ServiceSettings(**overrides)
