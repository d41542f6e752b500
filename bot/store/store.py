"""The App's state in one SQL database (SQLAlchemy 2): a SQLite file by default, PostgreSQL
through DATABASE_URL.

Tables: deliveries (every webhook, with its payload until it is routed and the retention has
passed, so none is lost; then only its metadata), jobs (the durable truth behind the queue's
messages), check_runs (one per repository, check name and head SHA), findings (scores per hunk
and per comment), the LLM cache (so a push that leaves a hunk unchanged sends no new LLM
request for it; keyed by installation, so no tenant can probe another's answers) and the LLM
usage of each installation per UTC day (its daily budget).

A SQLite file is created 0600 (its -wal and -shm files follow its mode), in a folder created
0700: it holds webhook payloads and private code.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    and_,
    bindparam,
    create_engine,
    delete,
    event,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from analyzers.paths import private_file
from analyzers.report import Finding
from bot.store.migrations import add_missing_columns

ACTIVE = ("queued", "running")
UNSENT = 0.0  # a queued job's updated_at while its queue message could not be sent
CACHE_FLUSH_S = 0.2  # LLM answers are written behind, at most this long after they arrive

log = logging.getLogger(__name__)


class Base(DeclarativeBase):
    pass


class Delivery(Base):
    __tablename__ = "deliveries"
    id: Mapped[str] = mapped_column(String(100), primary_key=True)  # X-GitHub-Delivery
    event: Mapped[str] = mapped_column(String(100))
    action: Mapped[str | None] = mapped_column(String(100), nullable=True)
    received_at: Mapped[float] = mapped_column(Float, default=time.time)
    status: Mapped[str] = mapped_column(String(20), default="received")  # received | routed | ignored
    jobs: Mapped[int] = mapped_column(Integer, default=0)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    payload: Mapped[str] = mapped_column(Text)


class JobRow(Base):
    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    delivery_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    kind: Mapped[str] = mapped_column(String(20))
    repo: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    head_sha: Mapped[str | None] = mapped_column(String(64), nullable=True)
    analyzer: Mapped[str | None] = mapped_column(String(100), nullable=True)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)
    heartbeat_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    result: Mapped[str | None] = mapped_column(Text, nullable=True)
    duration_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    llm_requests: Mapped[int] = mapped_column(Integer, default=0)
    llm_tokens: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (Index("ix_jobs_status", "status"), Index("ix_jobs_pr", "repo", "pr_number"))


class CheckRunRow(Base):
    __tablename__ = "check_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(300))
    name: Mapped[str] = mapped_column(String(200))
    head_sha: Mapped[str] = mapped_column(String(64))
    github_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pr_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    conclusion: Mapped[str | None] = mapped_column(String(20), nullable=True)
    scores: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    annotations: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)

    __table_args__ = (UniqueConstraint("repo", "name", "head_sha", name="uq_check_run"),)


class FindingRow(Base):
    __tablename__ = "findings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    check_run_id: Mapped[int] = mapped_column(ForeignKey("check_runs.id", ondelete="CASCADE"))
    analyzer: Mapped[str] = mapped_column(String(100))
    path: Mapped[str | None] = mapped_column(Text, nullable=True)
    start_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    key: Mapped[str] = mapped_column(String(200), default="")
    comment_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    scores: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class CacheRow(Base):
    __tablename__ = "llm_cache"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class LLMUsageRow(Base):
    """LLM requests and tokens one installation's jobs used on one UTC day (its daily budget)."""

    __tablename__ = "llm_usage_daily"
    installation_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    requests: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_hits: Mapped[int] = mapped_column(Integer, default=0)  # for /metrics only, never public


class Installation(Base):
    __tablename__ = "installations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account: Mapped[str] = mapped_column(String(300), default="")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)


class PublishedRow(Base):
    """Something rtcbot published that a person can take or leave (a committable suggestion),
    and what became of it: applied by a later push, its review thread resolved, reactions, the
    pull request merged (bot/app/feedback.py). One per repository, pull request and marker key."""

    __tablename__ = "published"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    installation_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    repo: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int] = mapped_column(Integer)
    head_sha: Mapped[str] = mapped_column(String(64))  # the head it was posted on
    analyzer: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(20))  # suggestion | comment
    key: Mapped[str] = mapped_column(String(64))  # the marker in the comment's body
    path: Mapped[str] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    replacement: Mapped[str] = mapped_column(Text, default="")
    rtc: Mapped[str | None] = mapped_column(String(10), nullable=True)  # pass | fail (Patched RTC)
    band: Mapped[str | None] = mapped_column(String(20), nullable=True)  # CRScore band of a comment
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    applied_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    resolved: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    thumbs_up: Mapped[int] = mapped_column(Integer, default=0)
    thumbs_down: Mapped[int] = mapped_column(Integer, default=0)
    merged: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # at the head it was posted on: the lines it flags, and whether its lines were there already
    # (None: not known, e.g. rows made before these columns; such a suggestion never counts applied)
    original: Mapped[str | None] = mapped_column(Text, nullable=True)
    preexisting: Mapped[bool | None] = mapped_column(Boolean, nullable=True)

    __table_args__ = (UniqueConstraint("repo", "pr_number", "key", name="uq_published"),)


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


DELIVERIES = Base.metadata.tables[Delivery.__tablename__]
INSERT_JOB = insert(Base.metadata.tables[JobRow.__tablename__])
_NULLABLE_KEYS = ("head_sha", "analyzer", "pr_number")


def utc_day(at: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if at is None else at))


def _job_conditions(null_keys: tuple[str, ...]) -> list[Any]:
    cols = {"kind": JobRow.kind, "repo": JobRow.repo, "head_sha": JobRow.head_sha,
            "analyzer": JobRow.analyzer, "pr_number": JobRow.pr_number}
    return [col.is_(None) if name in null_keys else col == bindparam(name) for name, col in cols.items()]


@functools.cache
def _debounce_statement(null_keys: tuple[str, ...]) -> Any:
    """SELECT a job doing the same work that makes a forced one (a re-run, an edited comment)
    unnecessary: one still queued (it reads the PR when it runs), or a forced one created
    since :since (the debounce window)."""
    forced = JobRow.spec["force"].as_boolean().is_(True)
    return select(JobRow.id).where(*_job_conditions(null_keys), or_(
        JobRow.status == "queued", and_(JobRow.created_at >= bindparam("since"), forced))).limit(1)


@functools.cache
def _unsent_statement(null_keys: tuple[str, ...]) -> Any:
    """SELECT a queued job doing the same work whose queue message could not be sent."""
    return select(JobRow.id).where(*_job_conditions(null_keys), JobRow.status == "queued",
                                   JobRow.updated_at == UNSENT).limit(1)


@functools.cache
def _same_job_statement(null_keys: tuple[str, ...]) -> Any:
    """SELECT a queued or running job doing the same work, with bound parameters (built once
    per shape: a key that is None compares with IS NULL, so that an index can still serve)."""
    return select(JobRow.id).where(*_job_conditions(null_keys), JobRow.status.in_(ACTIVE)).limit(1)


def _merged_note(note: str | None, merged: int) -> str:
    why = (f"{merged} job(s) not made again: the same work is queued or running, or was re-run "
           "within the debounce window")
    return f"{note}; {why}" if note else why


def _dialect_insert(dialect: str, table: Any) -> Any:
    """The dialect's INSERT that knows ON CONFLICT (SQLite, PostgreSQL), or None."""
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table)
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    return None


def _insert_delivery_statement(dialect: str) -> Any:
    """INSERT … ON CONFLICT (id) DO NOTHING RETURNING id, where the dialect has it (a row back:
    the delivery is new); None elsewhere."""
    stmt = _dialect_insert(dialect, DELIVERIES)
    if stmt is None:
        return None
    return stmt.on_conflict_do_nothing(index_elements=["id"]).returning(DELIVERIES.c.id)


def _cache_upsert_statement(dialect: str) -> Any:
    """INSERT … ON CONFLICT (key) DO UPDATE for the LLM cache, where the dialect has it."""
    stmt = _dialect_insert(dialect, Base.metadata.tables[CacheRow.__tablename__])
    if stmt is None:
        return None
    return stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value})


def _usage_upsert_statement(dialect: str) -> Any:
    """INSERT … ON CONFLICT (installation, day) DO UPDATE adding to the counts, where the
    dialect has it."""
    table = Base.metadata.tables[LLMUsageRow.__tablename__]
    stmt = _dialect_insert(dialect, table)
    if stmt is None:
        return None
    return stmt.on_conflict_do_update(index_elements=["installation_id", "day"], set_={
        "requests": table.c.requests + stmt.excluded.requests, "tokens": table.c.tokens + stmt.excluded.tokens,
        "cache_hits": table.c.cache_hits + stmt.excluded.cache_hits})


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1].split("?", 1)[0]
        if path and path != ":memory:" and not path.startswith("file:"):
            private_file(Path(path))
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


class QualificationRow(Base):
    """`rtcbot qualify --database`'s verdict on one model for one repository (bot/core/qualification.py):
    the App reads the latest per (repo, model) under `require_qualified: true`."""

    __tablename__ = "qualifications"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(300))  # owner/name
    model: Mapped[str] = mapped_column(String(300))
    base_url: Mapped[str | None] = mapped_column(Text, nullable=True)  # the endpoint it ran at
    qualified: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    figures: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # RTC, lift, CI, reasons...

    __table_args__ = (Index("ix_qualifications_repo_model", "repo", "model", "created_at"),)


class Store:
    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sqlite = self.engine.dialect.name == "sqlite"
        self._insert_delivery = _insert_delivery_statement(self.engine.dialect.name)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._cache_lock = threading.Lock()
        self._cache_pending: dict[str, str] = {}  # answers not yet written
        self._cache_writing: dict[str, str] = {}  # answers being written now
        self._cache_writer: threading.Thread | None = None
        self._cache_upsert = _cache_upsert_statement(self.engine.dialect.name)
        self._usage_upsert = _usage_upsert_statement(self.engine.dialect.name)
        if create:
            Base.metadata.create_all(self.engine)
            add_missing_columns(self.engine, Base.metadata)  # a database made by an older rtcbot

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as s:
            yield s

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """One write transaction on a Core connection (no ORM unit of work: the webhook's hot
        path). SQLite: BEGIN IMMEDIATE, so the write lock is taken (waiting up to the busy
        timeout) before the first read, and a read-then-write can never fail on a snapshot
        that another process's commit made stale."""
        with self.engine.connect() as c:
            if self._sqlite:
                c.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                yield c
            except BaseException:
                c.rollback()
                raise
            c.commit()

    def ping(self) -> None:
        with self.engine.connect() as c:
            c.execute(text("SELECT 1"))

    def close(self) -> None:
        try:
            self.cache_flush()
        except Exception:
            log.warning("could not write the last LLM answers to the cache", exc_info=True)
        self.engine.dispose()

    # -- deliveries -------------------------------------------------------------------------
    def _insert_new_delivery(self, c: Connection, values: dict[str, Any]) -> bool:
        """INSERT the delivery unless its id is there already; whether it was new."""
        if self._insert_delivery is not None:
            return c.execute(self._insert_delivery, values).first() is not None
        if c.scalar(select(Delivery.id).where(Delivery.id == values["id"])) is not None:
            return False
        c.execute(insert(DELIVERIES), values)
        return True

    def accept_delivery(self, delivery_id: str, event: str, action: str | None, payload: bytes | str,
                        jobs: Sequence[dict[str, Any]] | None, note: str | None = None, *,
                        force_window_s: float = 0.0) -> list[int] | None:
        """Record a delivery and the jobs it asks for, in one transaction; the new jobs' ids, or
        None when this id was seen before (a redelivery: nothing is written).

        `jobs` None: routing failed; the delivery stays `received` for the sweep to route.
        Otherwise it is `routed` (some jobs asked for) or `ignored`, with the number of jobs
        made (a job whose same work is already queued or running is not made again; a forced
        one, see `_insert_job`, neither when the same forced work was asked for within
        `force_window_s`)."""
        body = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        now = time.time()
        status = "received" if jobs is None else ("routed" if jobs else "ignored")
        values = {"id": delivery_id, "event": event, "action": action, "payload": body, "received_at": now,
                  "status": status, "jobs": len(jobs or ()), "note": note}
        try:
            with self.writing() as c:
                if not self._insert_new_delivery(c, values):
                    return None
                ids = [i for i in (self._insert_job(c, spec, delivery_id, now, force_window_s)
                                   for spec in jobs or ()) if i is not None]
                if len(ids) != len(jobs or ()):
                    c.execute(update(Delivery).where(Delivery.id == delivery_id)
                              .values(jobs=len(ids), note=_merged_note(note, len(jobs or ()) - len(ids))))
                return ids
        except IntegrityError:
            # the same id inserted concurrently, on a dialect without ON CONFLICT
            if self.delivery(delivery_id) is not None:
                return None
            raise

    def route_recorded(self, delivery_id: str, jobs: Sequence[dict[str, Any]], note: str | None = None, *,
                       force_window_s: float = 0.0) -> list[int] | None:
        """Route a delivery recorded earlier but not routed (the sweep): mark it and make its
        jobs in one transaction; None when it is no longer `received` (another sweep has it)."""
        now = time.time()
        with self.writing() as c:
            res = c.execute(update(Delivery).where(Delivery.id == delivery_id, Delivery.status == "received")
                            .values(status="routed" if jobs else "ignored", jobs=len(jobs), note=note))
            if res.rowcount != 1:
                return None
            ids = [i for i in (self._insert_job(c, spec, delivery_id, now, force_window_s) for spec in jobs)
                   if i is not None]
            if len(ids) != len(jobs):
                c.execute(update(Delivery).where(Delivery.id == delivery_id)
                          .values(jobs=len(ids), note=_merged_note(note, len(jobs) - len(ids))))
            return ids

    def record_delivery(self, delivery_id: str, event: str, action: str | None, payload: bytes | str) -> bool:
        """Record a delivery, not routed yet; False when this id was seen before (a redelivery)."""
        return self.accept_delivery(delivery_id, event, action, payload, None) is not None

    def delivery(self, delivery_id: str) -> Delivery | None:
        with self.session() as s:
            return s.get(Delivery, delivery_id)

    def prune_payloads(self, older_than_s: float) -> int:
        """Drop the payloads of routed (or ignored) deliveries received over `older_than_s` ago;
        their rows keep the metadata (id, event, action, status, jobs, note), so a redelivery
        is still recognised. Unrouted deliveries keep theirs for the sweep. How many."""
        cutoff = time.time() - older_than_s
        with self.writing() as c:
            res = c.execute(update(Delivery).where(
                Delivery.status.in_(("routed", "ignored")), Delivery.received_at <= cutoff, Delivery.payload != "")
                .values(payload=""))
            return int(res.rowcount or 0)

    def unrouted_deliveries(self, older_than_s: float) -> list[Delivery]:
        cutoff = time.time() - older_than_s
        with self.session() as s:
            return list(s.scalars(select(Delivery).where(Delivery.status == "received",
                                                         Delivery.received_at < cutoff)))

    # -- jobs -------------------------------------------------------------------------------
    @staticmethod
    def _job_keys(spec: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, Any]]:
        """(the keys of `spec` that are None, the others' values): what identifies its work."""
        keys = {"kind": spec["kind"], "repo": spec["repo"], "head_sha": spec.get("head_sha"),
                "analyzer": spec.get("analyzer"), "pr_number": spec.get("pr_number")}
        return (tuple(k for k in _NULLABLE_KEYS if keys[k] is None),
                {k: v for k, v in keys.items() if v is not None})

    @staticmethod
    def _insert_job(c: Connection, spec: dict[str, Any], delivery_id: str | None, now: float,
                    force_window_s: float = 0.0) -> int | None:
        """Insert a queued job inside the caller's transaction; None when the same work is
        already queued or running. A forced job (a re-run, an edited comment: work to do again
        even where it was done) is made unless the same work is still queued (it reads the PR
        when it runs) or was forced within the last `force_window_s` (a burst of re-runs or
        edits makes one analysis per head and analysis per window)."""
        keys = {"kind": spec["kind"], "repo": spec["repo"], "head_sha": spec.get("head_sha"),
                "analyzer": spec.get("analyzer"), "pr_number": spec.get("pr_number")}
        shape = tuple(k for k in _NULLABLE_KEYS if keys[k] is None)
        params: dict[str, Any] = {k: v for k, v in keys.items() if v is not None}
        if spec.get("force"):
            if c.scalar(_debounce_statement(shape), {**params, "since": now - force_window_s}) is not None:
                return None
        elif c.scalar(_same_job_statement(shape), params) is not None:
            return None
        res = c.execute(INSERT_JOB, {
            **keys, "delivery_id": delivery_id, "spec": spec, "status": "queued", "attempts": 0,
            "created_at": now, "updated_at": now, "llm_requests": 0, "llm_tokens": 0})
        key = res.inserted_primary_key
        if key is None:
            raise RuntimeError("the database returned no id for the new job")
        return int(key[0])

    def add_job(self, spec: dict[str, Any], delivery_id: str | None = None, *,
                force_window_s: float = 0.0) -> int | None:
        """Insert a queued job; None when the same work is already queued or running (see
        `_insert_job` for forced jobs)."""
        with self.writing() as c:
            return self._insert_job(c, spec, delivery_id, time.time(), force_window_s)

    def expedite(self, job_ids: Sequence[int]) -> None:
        """Mark queued jobs whose message could not be sent as unsent (updated_at = UNSENT):
        the sending process retries them within seconds (bot/app/sweep.py `Resender`), the next
        sweep sends them (they look older than `requeue_after_s`), and a later delivery of the
        same work sends them (`unsent_like`) instead of being taken as a duplicate."""
        if job_ids:
            with self.writing() as c:
                c.execute(update(JobRow).where(JobRow.id.in_(list(job_ids)), JobRow.status == "queued")
                          .values(updated_at=UNSENT))

    def mark_sent(self, job_ids: Sequence[int]) -> None:
        """The messages of these unsent jobs went out: clear the mark."""
        if job_ids:
            with self.writing() as c:
                c.execute(update(JobRow).where(JobRow.id.in_(list(job_ids)), JobRow.status == "queued",
                                               JobRow.updated_at == UNSENT).values(updated_at=time.time()))

    def unsent_jobs(self, limit: int = 500) -> list[int]:
        """Ids of queued jobs marked unsent, oldest first."""
        with self.engine.connect() as c:
            return [int(i) for i in c.scalars(select(JobRow.id).where(
                JobRow.status == "queued", JobRow.updated_at == UNSENT).order_by(JobRow.id).limit(limit))]

    def unsent_like(self, specs: Sequence[dict[str, Any]]) -> list[int]:
        """Ids of the queued, unsent jobs doing the work of `specs` (a delivery merged into
        them: it sends them again)."""
        out: list[int] = []
        with self.engine.connect() as c:
            for spec in specs:
                shape, params = self._job_keys(spec)
                found = c.scalar(_unsent_statement(shape), params)
                if found is not None and int(found) not in out:
                    out.append(int(found))
        return out

    def job(self, job_id: int) -> JobRow | None:
        with self.session() as s:
            return s.get(JobRow, job_id)

    def jobs(self, **where: Any) -> list[JobRow]:
        with self.session() as s:
            q = select(JobRow).order_by(JobRow.id)
            for k, v in where.items():
                q = q.where(getattr(JobRow, k) == v)
            return list(s.scalars(q))

    def start_job(self, job_id: int) -> JobRow | None:
        """queued → running, atomically; None when another worker has it or it is over."""
        now = time.time()
        with self.session() as s:
            res = s.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "queued")
                            .values(status="running", attempts=JobRow.attempts + 1,
                                    heartbeat_at=now, updated_at=now))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                return None
            return s.get(JobRow, job_id)

    def heartbeat(self, job_id: int) -> None:
        with self.session() as s:
            s.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "running")
                      .values(heartbeat_at=time.time()))

    def finish_job(self, job_id: int, status: str, result: str | None = None, *,
                   duration_s: float | None = None, usage: dict[str, int] | None = None,
                   attempt: int | None = None) -> bool:
        """Record a job's end; False when `attempt` is given and is no longer the job's latest
        (the sweep took the job from a worker it thought dead and gave it to another attempt:
        the latest attempt's status stands)."""
        usage = usage or {}
        where = [JobRow.id == job_id]
        if attempt is not None:
            where.append(JobRow.attempts == attempt)
        with self.session() as s:
            res = s.execute(update(JobRow).where(*where)
                      .values(status=status, result=result, updated_at=time.time(), duration_s=duration_s,
                              llm_requests=int(usage.get("requests", 0)),
                              llm_tokens=int(usage.get("tokens", 0))))
            return res.rowcount == 1  # type: ignore[attr-defined,no-any-return]

    def metrics(self) -> dict[str, Any]:
        """Counts for /metrics, read at scrape time (the worker is another process)."""
        from sqlalchemy import func

        with self.session() as s:
            deliveries = s.execute(select(Delivery.event, Delivery.status, func.count())
                                   .group_by(Delivery.event, Delivery.status)).all()
            jobs = s.execute(select(JobRow.kind, JobRow.status, func.count(),
                                    func.coalesce(func.sum(JobRow.duration_s), 0.0),
                                    func.coalesce(func.sum(JobRow.llm_requests), 0),
                                    func.coalesce(func.sum(JobRow.llm_tokens), 0))
                             .group_by(JobRow.kind, JobRow.status)).all()
            cache_hits = s.scalar(select(func.coalesce(func.sum(LLMUsageRow.cache_hits), 0)))
        return {"deliveries": [tuple(r) for r in deliveries], "jobs": [tuple(r) for r in jobs],
                "llm_cache_hits": int(cache_hits or 0)}

    def job_status(self, job_id: int) -> str | None:
        with self.session() as s:
            return s.scalar(select(JobRow.status).where(JobRow.id == job_id))

    def cancel_older(self, repo: str, pr_number: int, head_sha: str, root: int) -> list[JobRow]:
        """Cancel the queued jobs of this PR for another head SHA that come from an older
        delivery than job `root` (a job's root: the `pr` job that fanned it out, or itself)."""
        with self.session() as s:
            rows = list(s.scalars(select(JobRow).where(
                JobRow.repo == repo, JobRow.pr_number == pr_number, JobRow.head_sha != head_sha,
                JobRow.status == "queued")))
            out = []
            for r in rows:
                if int(r.spec.get("root") or r.id) < root:
                    r.status, r.result, r.updated_at = "cancelled", f"superseded by {head_sha}", time.time()
                    out.append(r)
            return out

    def newer_head(self, repo: str, pr_number: int, head_sha: str, job_id: int) -> str | None:
        """The head SHA of a `pr` job for this PR delivered after job `job_id`, if any."""
        with self.session() as s:
            return s.scalar(select(JobRow.head_sha).where(
                JobRow.repo == repo, JobRow.pr_number == pr_number, JobRow.kind == "pr",
                JobRow.head_sha != head_sha, JobRow.id > job_id).order_by(JobRow.id.desc()).limit(1))

    def stale_running(self, stale_after_s: float) -> list[JobRow]:
        cutoff = time.time() - stale_after_s
        with self.session() as s:
            return list(s.scalars(select(JobRow).where(JobRow.status == "running",
                                                       JobRow.heartbeat_at < cutoff)))

    def stale_queued(self, older_than_s: float) -> list[JobRow]:
        cutoff = time.time() - older_than_s
        with self.session() as s:
            return list(s.scalars(select(JobRow).where(JobRow.status == "queued",
                                                       JobRow.updated_at < cutoff)))

    def requeue(self, job_id: int, expect: str, attempts: int | None = None) -> bool:
        """Put a job back to queued (from `expect`), atomically. `attempts`: only while it is
        still the attempt the caller saw (a sweep that saw attempt N stale must not requeue
        attempt N + 1, which another sweep's requeue already started: it would run twice)."""
        where = [JobRow.id == job_id, JobRow.status == expect]
        if attempts is not None:
            where.append(JobRow.attempts == attempts)
        with self.session() as s:
            res = s.execute(update(JobRow).where(*where).values(status="queued", updated_at=time.time()))
            return res.rowcount == 1  # type: ignore[attr-defined,no-any-return]

    # -- check runs -------------------------------------------------------------------------
    def check_run(self, repo: str, name: str, head_sha: str) -> CheckRunRow | None:
        with self.session() as s:
            return s.scalars(select(CheckRunRow).where(
                CheckRunRow.repo == repo, CheckRunRow.name == name, CheckRunRow.head_sha == head_sha)).first()

    def claim_check_run(self, repo: str, name: str, head_sha: str, pr_number: int | None = None) -> bool:
        """Insert the row of (repo, check name, head) without a GitHub id, before creating its
        check run; False when the row is there already (another job has it or is creating it)."""
        try:
            with self.session() as s:
                s.add(CheckRunRow(repo=repo, name=name, head_sha=head_sha, status="queued", pr_number=pr_number,
                                  updated_at=time.time()))
        except IntegrityError:
            return False
        return True

    def save_check_run(self, repo: str, name: str, head_sha: str, **values: Any) -> CheckRunRow:
        values["updated_at"] = time.time()
        for _ in range(2):  # a concurrent insert of the same key: read it back and update
            try:
                with self.session() as s:
                    row = s.scalars(select(CheckRunRow).where(
                        CheckRunRow.repo == repo, CheckRunRow.name == name,
                        CheckRunRow.head_sha == head_sha)).first()
                    if row is None:
                        row = CheckRunRow(repo=repo, name=name, head_sha=head_sha)
                        s.add(row)
                    for k, v in values.items():
                        setattr(row, k, v)
                    s.flush()
                    return row
            except IntegrityError:
                continue
        raise RuntimeError(f"cannot save check run {name} for {repo}@{head_sha}")

    def save_findings(self, check_run_id: int, findings: Sequence[Finding]) -> None:
        with self.session() as s:
            s.execute(delete(FindingRow).where(FindingRow.check_run_id == check_run_id))
            for f in findings:
                comment = f.comment_id
                s.add(FindingRow(check_run_id=check_run_id, analyzer=f.analyzer, path=f.path,
                                 start_line=f.start_line, end_line=f.end_line, key=f.key[:200],
                                 comment_id=str(comment) if comment is not None else None,
                                 scores=dict(f.scores), data=json.loads(json.dumps(f.to_dict(), default=str))))

    def findings(self, check_run_id: int) -> list[FindingRow]:
        with self.session() as s:
            return list(s.scalars(select(FindingRow).where(FindingRow.check_run_id == check_run_id)
                                  .order_by(FindingRow.id)))

    # -- LLM usage per installation and UTC day (the daily budget) ---------------------------
    def llm_usage_today(self, installation_id: int) -> tuple[int, int]:
        """(requests, tokens) this installation's jobs used today (UTC)."""
        with self.engine.connect() as c:
            row = c.execute(select(LLMUsageRow.requests, LLMUsageRow.tokens).where(
                LLMUsageRow.installation_id == installation_id, LLMUsageRow.day == utc_day())).first()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def add_llm_usage(self, installation_id: int, requests: int, tokens: int, cache_hits: int = 0) -> None:
        if requests <= 0 and tokens <= 0 and cache_hits <= 0:
            return
        values = {"installation_id": installation_id, "day": utc_day(), "requests": requests, "tokens": tokens,
                  "cache_hits": cache_hits}
        if self._usage_upsert is not None:
            with self.writing() as c:
                c.execute(self._usage_upsert, values)
            return
        with self.session() as s:  # other dialects: read, then write
            row = s.get(LLMUsageRow, (installation_id, values["day"]))
            if row is None:
                s.add(LLMUsageRow(**values))
            else:
                row.requests += requests
                row.tokens += tokens
                row.cache_hits += cache_hits

    # -- installations ----------------------------------------------------------------------
    def save_installation(self, installation_id: int, account: str, active: bool) -> None:
        with self.session() as s:
            row = s.get(Installation, installation_id) or Installation(id=installation_id)
            row.account, row.active, row.updated_at = account, active, time.time()
            s.add(row)

    def installation(self, installation_id: int) -> Installation | None:
        with self.session() as s:
            return s.get(Installation, installation_id)

    # -- qualification records (`rtcbot qualify --database`) ---------------------------------
    def save_qualification(self, repo: str, model: str, qualified: bool, figures: dict[str, Any], *,
                           base_url: str | None = None, at: float | None = None) -> int:
        with self.session() as s:
            row = QualificationRow(repo=repo, model=model, base_url=base_url, qualified=qualified,
                                   figures=figures, created_at=time.time() if at is None else at)
            s.add(row)
            s.flush()
            return row.id

    def latest_qualification(self, repo: str, model: str) -> QualificationRow | None:
        """The newest record of `model` on `repo` (None: never qualified there)."""
        with self.session() as s:
            return s.scalars(select(QualificationRow)
                             .where(QualificationRow.repo == repo, QualificationRow.model == model)
                             .order_by(QualificationRow.created_at.desc(), QualificationRow.id.desc())
                             .limit(1)).first()

    # -- LLM cache --------------------------------------------------------------------------
    # Answers are written behind: `cache_put` buffers them, a writer thread stores the buffer
    # in one transaction every CACHE_FLUSH_S, and `cache_flush()` stores what is left (a job
    # calls it before it finishes, so a finished job's answers are in the store). A worker
    # killed midway loses at most the last CACHE_FLUSH_S of answers; they are asked again.
    # Writing each answer in a transaction of its own as it arrived held up the requests that
    # came after it: 8 hunks' forward answers arriving together were 24 writes in a row before
    # the last hunk's backward requests could go out.
    def cache_get(self, key: str) -> str | None:
        with self._cache_lock:
            value = self._cache_pending.get(key, self._cache_writing.get(key))
        if value is not None:
            return value
        with self.engine.connect() as c:
            found = c.execute(select(CacheRow.value).where(CacheRow.key == key)).scalar()
        return None if found is None else str(found)

    def cache_put(self, key: str, value: str) -> None:
        with self._cache_lock:
            self._cache_pending[key] = value
            if self._cache_writer is None:
                self._cache_writer = threading.Thread(target=self._write_cache_behind, name="llm-cache-writer",
                                                      daemon=True)
                self._cache_writer.start()

    def cache_flush(self) -> None:
        """Write the buffered answers now, in one transaction."""
        with self._cache_lock:
            items = self._cache_pending
            self._cache_pending = {}
            self._cache_writing.update(items)
        if not items:
            return
        try:
            rows = [{"key": k, "value": v} for k, v in items.items()]
            if self._cache_upsert is not None:
                with self.session() as s:
                    s.execute(self._cache_upsert, rows)
            else:
                with self.session() as s:
                    for row in rows:
                        s.merge(CacheRow(**row))
        except Exception:
            with self._cache_lock:  # kept for the next flush
                for k, v in items.items():
                    self._cache_pending.setdefault(k, v)
            raise
        finally:
            with self._cache_lock:
                for k in items:
                    self._cache_writing.pop(k, None)

    def _write_cache_behind(self) -> None:
        while True:
            time.sleep(CACHE_FLUSH_S)
            try:
                self.cache_flush()
            except Exception:
                log.warning("could not write LLM answers to the cache; will try again", exc_info=True)
            with self._cache_lock:
                if not self._cache_pending:
                    self._cache_writer = None
                    return

    def cache_size(self) -> int:
        with self.session() as s:
            return len(list(s.scalars(select(CacheRow.key))))


class StoreCache:
    """The LLM client's Cache protocol (get / put) on the store's llm_cache table, within one
    namespace (the installation): one tenant's answers are never served to another, so none
    can learn from its cache hits (or timings) what another's private pull requests hold."""

    def __init__(self, store: Store, namespace: int | str) -> None:
        self.store = store
        self.prefix = f"i{namespace}:"

    def get(self, key: str) -> str | None:
        return self.store.cache_get(self.prefix + key)

    def put(self, key: str, value: str) -> None:
        self.store.cache_put(self.prefix + key, value)
