"""Where the App's store is, from the environment: DATABASE_URL (or RTCBOT_DATABASE_URL; a
SQLAlchemy URL, Heroku's postgres:// taken as psycopg 3), else a SQLite file under
RTCBOT_DATA_DIR. The App's settings include these (bot/app/settings.py); `rtcbot qualify
--database app` reads them alone."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    root = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return Path(root) / "rtcbot"


class StoreSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RTCBOT_", extra="ignore", populate_by_name=True)

    database_url: str | None = Field(default=None, validation_alias=AliasChoices("DATABASE_URL", "RTCBOT_DATABASE_URL"))
    data_dir: Path = Field(default_factory=default_data_dir)

    def database(self) -> str:
        if self.database_url:
            url = self.database_url
            # Heroku-style postgres:// URLs: use psycopg 3.
            for prefix in ("postgres://", "postgresql://"):
                if url.startswith(prefix):
                    return "postgresql+psycopg://" + url[len(prefix):]
            return url
        return f"sqlite:///{self.data_dir / 'rtcbot.sqlite3'}"
