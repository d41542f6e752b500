"""The job queue: huey on a SQLite file by default (no server), on Redis when REDIS_URL is set.

A queue message carries only a job id; the job itself (and whether it is done) lives in the
store, so a message lost with a killed worker is recovered by the sweep (bot/app/sweep.py).

The SQLite queue runs in WAL mode with synchronous=NORMAL, like the store's SQLite database:
a commit is durable when the process that made it is killed (the WAL is in the OS's hands),
and only an OS crash or power cut can take back the last ones; in exchange a commit does not
wait for an fsync, which on a busy disk takes from a fraction of a millisecond to tens of them
(with FULL the webhook's p99 under load was seconds; see bench/webhook_load.py).
"""

from __future__ import annotations

import sqlite3
import urllib.parse

from huey import Huey, RedisHuey, SqliteHuey
from huey.storage import SqliteStorage

from analyzers.paths import private_file
from bot.core.settings import ServiceSettings

QUEUE_NAME = "rtcbot"


class WalNormalSqliteStorage(SqliteStorage):  # type: ignore[misc]  # huey is untyped
    """huey's SQLite storage (WAL) with synchronous=NORMAL (huey offers only FULL or OFF)."""

    def _create_connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        return conn


class QueueHuey(SqliteHuey):  # type: ignore[misc]
    storage_class = WalNormalSqliteStorage


def make_huey(settings: ServiceSettings) -> Huey:
    if settings.redis_url:
        return RedisHuey(QUEUE_NAME, url=settings.redis_url, results=False, utc=True)
    private_file(settings.data_dir / "queue.sqlite3")  # 0600 in a folder made 0700, like the store
    return QueueHuey(QUEUE_NAME, filename=str(settings.data_dir / "queue.sqlite3"), results=False,
                     utc=True, timeout=30)


def describe(huey: Huey) -> str:
    return "redis" if isinstance(huey, RedisHuey) else "sqlite"


def ping(huey: Huey) -> int:
    """The number of waiting messages; raises when the queue's storage is unreachable."""
    return int(huey.pending_count())



class QueueUnavailable(RuntimeError):
    """The queue does not answer; the message names the setting to check."""


def safe_url(url: str) -> str:
    """`url` without its password."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def check(huey: Huey, settings: ServiceSettings) -> None:
    """Raise QueueUnavailable, in one line naming REDIS_URL (or RTCBOT_DATA_DIR), when the
    queue does not answer."""
    try:
        ping(huey)
    except Exception as e:
        text = str(e).strip().splitlines()
        reason = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
        if settings.redis_url:
            where = f"the Redis queue at REDIS_URL={safe_url(settings.redis_url)}"
        else:
            where = f"the SQLite queue in RTCBOT_DATA_DIR={settings.data_dir}"
        raise QueueUnavailable(f"cannot reach {where} ({reason})") from None
