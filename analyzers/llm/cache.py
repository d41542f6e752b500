"""The LLM client's answers cache: a request's key (`request_key`: the endpoint, the request,
the seed) and a persistent store of answers (`SqliteCache`, one SQLite file, 0600), so that a
re-run costs zero requests and reproduces the same samples. Any object with `get` and `put`
(`Cache`) may stand in for it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from analyzers.code.paths import private_file


class Cache(Protocol):
    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


class SqliteCache:
    """A persistent key → completion store in one SQLite file, safe across threads."""

    def __init__(self, path: Path):
        # 0600 in a folder made 0700: the answers quote the code that was sent (-wal and -shm
        # files take the database file's mode)
        private_file(path)
        self._path = path
        self._local = threading.local()
        with self._conn() as c:
            c.execute("CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM llm_cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, value: str) -> None:
        with self._conn() as c:
            c.execute("INSERT OR REPLACE INTO llm_cache (key, value) VALUES (?, ?)", (key, value))


def request_key(base_url: str, model: str, messages: Sequence[dict[str, str]], temperature: float, max_tokens: int,
                stop: Sequence[str] | None, seed: int) -> str:
    """The cache key of a request: the endpoint too, so two endpoints serving one model name
    never share answers (`rtcbot qualify URL#NAME` compares them). Keys made before the
    endpoint was in them (no base URL first) simply stop matching: those answers are asked
    again, nothing to migrate."""
    payload = json.dumps(
        [base_url.rstrip("/"), model, list(messages), round(temperature, 4), max_tokens, list(stop or []), seed],
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode()).hexdigest()
