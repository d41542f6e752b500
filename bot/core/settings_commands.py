"""Who may ask rtcbot for what on a pull request (`@<name> rerun`, bot/core/pr_commands.py): the
settings the App (`ServiceSettings` inherits them) and the Action (`rtcbot action` on an
`issue_comment` event) share, from the environment with the `RTCBOT_` prefix."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.core.settings_env import SettingsError, load


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
