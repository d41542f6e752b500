"""Service settings for the GitHub App (`rtcbot serve`, `rtcbot worker`), from the environment.

Everything is prefixed `RTCBOT_` except the two URLs every platform already names:
`DATABASE_URL` (SQLAlchemy URL; default a SQLite file in the data directory) and `REDIS_URL`
(the job queue; default a SQLite-backed huey queue in the data directory).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from analyzers.context import Tools
from analyzers.llm import LLMSettings
from analyzers.registry import DEFAULT_ANALYZERS
from bot.github.settings import GitHubSettings

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB


def _default_data_dir() -> Path:
    root = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return Path(root) / "rtcbot"


class SettingsError(ValueError):
    """A service setting is missing or wrong (one clear line)."""


def _split_list(v: Any) -> Any:
    """A list setting from the environment: a JSON list, or comma-separated."""
    if isinstance(v, str):
        if v.strip().startswith("["):
            return json.loads(v)
        return [x.strip() for x in v.split(",") if x.strip()]
    return v


class ToolSettings(BaseSettings):
    """What only the operator chooses (`analyzers.context.Tools`), never a repository:
    RTCBOT_SEMGREP (the executable), RTCBOT_SEMGREP_RULES (extra rule files, comma-separated),
    RTCBOT_EMBEDDING_MODELS (embedding models a repository may pick besides the default),
    RTCBOT_SANDBOX (auto | bwrap | userns | none). Read by every surface (App, Action, CLI)."""

    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    semgrep: str | None = None
    semgrep_rules: Annotated[list[str], NoDecode] = Field(default_factory=list)
    embedding_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    sandbox: Literal["auto", "bwrap", "userns", "none"] = "auto"

    @field_validator("semgrep_rules", "embedding_models", mode="before")
    @classmethod
    def _split_tools(cls, v: Any) -> Any:
        return _split_list(v)

    def tools(self) -> Tools:
        return Tools(semgrep=self.semgrep or None, extra_rules=tuple(self.semgrep_rules),
                     embedding_models=tuple(self.embedding_models), sandbox=self.sandbox)


def load_tools(**overrides: Any) -> Tools:
    """The operator's tools from the environment (SettingsError: one line)."""
    try:
        return ToolSettings(**overrides).tools()
    except (ValidationError, ValueError) as e:
        raise SettingsError(_one_line(e)) from None


def _one_line(e: Exception) -> str:
    if isinstance(e, ValidationError):
        err = e.errors()[0]
        name = "RTCBOT_" + "_".join(str(x) for x in err["loc"]).upper()
        return f"{name}: {err['msg']}"
    return str(e).splitlines()[0] if str(e) else type(e).__name__


class ServiceSettings(ToolSettings, GitHubSettings):
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
    # LLM budgets (cut-off work is listed as skipped in the check run): per job, and per
    # installation per UTC day (counted in the store; jobs running at once may pass it by
    # at most one job's budget each)
    llm_max_requests: int = Field(default=1000, ge=1)  # per job, retries included
    llm_max_tokens: int = Field(default=2_000_000, ge=1)  # per job, prompt + completion
    llm_daily_requests: int = Field(default=20_000, ge=1)  # per installation per day
    llm_daily_tokens: int = Field(default=50_000_000, ge=1)  # per installation per day
    allowed_models: Annotated[list[str], NoDecode] = Field(default_factory=list)  # models a repository may pick

    # behaviour
    analyzers: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_ANALYZERS))
    comment_analyzers: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["crscore"])
    process_drafts: bool = False
    max_body_bytes: int = MAX_BODY_BYTES

    # GitHub client: write_interval_s, http_timeout_s, http_retries, retry_backoff_s,
    # secondary_wait_s, max_retry_wait_s (bot.github.settings.GitHubSettings)

    # worker
    workers: int = 2
    heartbeat_s: float = 10.0
    stale_after_s: float = 60.0  # a running job without a heartbeat this long is abandoned
    requeue_after_s: float = 600.0  # a queued job nobody picked up this long is enqueued again
    sweep_interval_s: float = 30.0
    max_attempts: int = 3
    # forced work (re-run requests, edited review comments): at most one analysis per head and
    # analysis per window; a delivery's payload is dropped this long after it was routed
    force_debounce_s: float = Field(default=30.0, ge=0)
    payload_retention_s: float = Field(default=7 * 24 * 3600.0, ge=0)

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
            max_tokens_total=self.llm_max_tokens,
            cache_path=None,  # the store is the cache
        )


def load_settings(**overrides: Any) -> ServiceSettings:
    return ServiceSettings(**overrides)
