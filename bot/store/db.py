"""The database under the store: its engine (a SQLite file by default, PostgreSQL through
DATABASE_URL), sessions and write transactions, the tables made or brought up to date at start
(and the schema's versioned steps applied: bot/store/versions.py),
and what callers outside the store need to know of its errors and URLs without importing
SQLAlchemy.

A SQLite file is created 0600 (its -wal and -shm files follow its mode), in a folder created
0700: it holds webhook payloads and private code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    InterfaceError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.orm import Session, sessionmaker

from analyzers.code.paths import private_file
from analyzers.urls import redact_url
from bot.store.backfill import backfill
from bot.store.migrations import add_missing_columns
from bot.store.schema import Base
from bot.store.versions import migrate

DatabaseError = SQLAlchemyError  # whatever the database, its driver or SQLAlchemy raised
BadDatabaseURL = ArgumentError  # a database URL SQLAlchemy cannot read
BACKENDS = ("postgresql", "sqlite")
DATABASE_EXAMPLE = "postgresql://rtcbot@db.internal/rtcbot"


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    # WAL + NORMAL: a commit survives the process being killed; only an OS crash or power cut
    # can take back the last ones. FULL fsyncs every commit while holding the write lock,
    # which on a busy disk serialises every webhook behind it (see bot/app/queue.py).
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1].split("?", 1)[0]
        if path and path != ":memory:" and not path.startswith("file:"):
            private_file(Path(path))
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


class Database:
    """One engine, its sessions and its write transactions; every repository of the store
    (bot/store/store.py) works through one."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name
        self.sqlite = self.dialect == "sqlite"
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        if create:
            new = not inspect(self.engine).get_table_names()
            Base.metadata.create_all(self.engine)
            if add_missing_columns(self.engine, Base.metadata):  # a database made by an older rtcbot
                with self.writing() as c:
                    backfill(c)  # GitHub's ids where the old rows let them be known
            migrate(self.engine, new=new)  # the versioned steps (bot/store/versions.py)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One ORM transaction, committed when the block ends."""
        with self._sessions.begin() as s:
            yield s

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """One write transaction on a Core connection (no ORM unit of work: the webhook's hot
        path). SQLite: BEGIN IMMEDIATE, so the write lock is taken (waiting up to the busy
        timeout) before the first read, and a read-then-write can never fail on a snapshot
        that another process's commit made stale."""
        with self.engine.connect() as c:
            if self.sqlite:
                c.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                yield c
            except BaseException:
                c.rollback()
                raise
            c.commit()

    def reading(self) -> Connection:
        """A Core connection for reads (use it in a `with` block)."""
        return self.engine.connect()

    def upsert(self, table: Any) -> Any:
        """The dialect's INSERT that knows ON CONFLICT (SQLite, PostgreSQL), or None."""
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            return sqlite_insert(table)
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(table)
        return None

    def insert_on_conflict(self, table: Any) -> Any:
        """`upsert`, for a write that must be one atomic statement (two workers writing the same
        key at once: one inserts, the other then finds the row); on a database rtcbot does not
        store in (`url_problem` refuses it first), BadDatabaseURL."""
        stmt = self.upsert(table)
        if stmt is None:
            raise BadDatabaseURL(f"rtcbot stores its data in PostgreSQL or SQLite, not {self.dialect!r}")
        return stmt

    def ping(self) -> None:
        with self.engine.connect() as c:
            c.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()


# -- for callers outside the store: its errors and URLs in plain words ---------------------------
def database_away(e: BaseException) -> bool:
    """The database did not answer (down, restarting, its connection dropped): worth another try."""
    return isinstance(e, OperationalError | InterfaceError) or (isinstance(e, DBAPIError) and e.connection_invalidated)


def error_reason(e: BaseException) -> str | None:
    """The database server's own reason for `e` in one line (never SQLAlchemy's three), or None
    when `e` did not come from the database."""
    if not isinstance(e, SQLAlchemyError):
        return None
    first = str(e.orig if isinstance(e, DBAPIError) else e).strip().splitlines() or [type(e).__name__]
    return " ".join(first[0].rsplit(" failed: ", 1)[-1].removeprefix("FATAL:").split())


def safe_url(url: str) -> str:
    """The URL to show, its userinfo and query values hidden (analyzers/urls.py); "(unreadable)"
    when it is not a database URL."""
    try:
        make_url(url)
    except Exception:  # noqa: BLE001 - not a URL: said by url_problem
        return "(unreadable)"
    return redact_url(url)


def url_problem(url: str) -> str | None:
    """What is wrong with a database URL that shows without connecting, in words that follow
    the setting's name: not a URL, a database rtcbot does not store in, a driver that is not
    installed. None when it reads well (only connecting tells more)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return f"not a database URL (e.g. {DATABASE_EXAMPLE})"
    if parsed.get_backend_name() not in BACKENDS:
        return (f"rtcbot stores its data in PostgreSQL or SQLite, not {parsed.get_backend_name()!r} "
                f"(e.g. {DATABASE_EXAMPLE})")
    try:
        parsed.get_dialect().import_dbapi()
    except (NoSuchModuleError, ImportError):
        return f"the driver of {parsed.drivername!r} is not installed (postgresql+psycopg:// comes with rtcbot)"
    return None
