"""The LLM client's answers cache: a request's key (`request_key`: the model's identity, the
request, the seed) and a persistent store of answers (`SqliteCache`, one SQLite file, 0600), so
that a re-run costs zero requests and reproduces the same samples. Any object with `get` and
`put` (`Cache`) may stand in for it.

The identity is the endpoint's normalised URL for a remote model (`endpoint_identity`: two
endpoints never share answers, as two tenants' must not), and the model file's name and
content hash for the embedded one (`file_identity`), whose server listens on a new port each
run: its re-runs cost zero requests too."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

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
            # as the store's database (bot/store/db.py): a commit is not an fsync (a request's
            # n answers and their bills are 2n commits: 0.41 ms each with an fsync here, idle,
            # 0.06 ms without). A crash of the machine may lose the last answers (asked again),
            # never the file
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM llm_cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, value: str) -> None:
        with self._conn() as c:
            c.execute("INSERT OR REPLACE INTO llm_cache (key, value) VALUES (?, ?)", (key, value))


DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_identity(base_url: str) -> str:
    """A remote endpoint as the cache knows it: scheme and host in lower case, a default port
    and trailing slashes dropped (`HTTP://Host:80/v1/` is `http://host/v1`); the path, the query
    and any other port kept, so distinct endpoints stay distinct."""
    try:
        parts = urlsplit(base_url.strip())
        port = parts.port
    except ValueError:
        return base_url.rstrip("/")
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username is not None:  # never seen by the endpoint as a name: kept, distinct
        netloc = f"{parts.username}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


@lru_cache(maxsize=8)
def _digest(path: Path, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def file_identity(path: Path) -> str:
    """A model file as the cache knows it: `embedded:<name>:<sha256 of its content>` (hashed once
    a process while its size and time are unchanged), whatever port its server listens on."""
    st = path.stat()
    return f"embedded:{path.name}:{_digest(path.resolve(), st.st_size, st.st_mtime_ns)}"


def request_key(base_url: str, model: str, messages: Sequence[dict[str, str]], temperature: float, max_tokens: int,
                stop: Sequence[str] | None, seed: int) -> str:
    """The cache key of a request: the endpoint's identity too (`base_url`: `endpoint_identity`
    or `file_identity`), so two endpoints serving one model name never share answers (`rtcbot
    qualify URL#NAME` compares them). Keys made before (the raw URL first) simply stop matching:
    those answers are asked again, nothing to migrate."""
    payload = json.dumps(
        [base_url.rstrip("/"), model, list(messages), round(temperature, 4), max_tokens, list(stop or []), seed],
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode()).hexdigest()
