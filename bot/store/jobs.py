"""Jobs: the durable truth behind the queue's messages (the queue only carries their ids).

A job's work is identified by (kind, repository, head SHA, analyzer, pull request): a job whose
same work is already queued or running is not made again; a forced one (a re-run, an edited
comment) is made unless the same work is still queued or was forced within the debounce window.
A queued job whose queue message could not be sent is marked unsent (updated_at = UNSENT).
A job whose spec has a `once` key (a command: its comment) is made at most once, ever.

`Jobs` is one job's life and its lookups; the reads across jobs (unsent, stale, the oldest
queued, the LLM use) are bot/store/job_queries.py's `JobQueries`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, bindparam, insert, or_, select, update
from sqlalchemy.engine import Connection

from bot.store.db import Database
from bot.store.schema import ACTIVE, UNSENT, Base, JobRow

INSERT_JOB = insert(Base.metadata.tables[JobRow.__tablename__])
_NULLABLE_KEYS = ("head_sha", "analyzer", "pr_number")
CHARGED = "charged"  # a command job's spec key: it spent (its author's nth of the day; Jobs.charge)


def job_conditions(null_keys: tuple[str, ...]) -> list[Any]:
    """The conditions that pick the jobs doing one piece of work: each key of `null_keys` IS
    NULL, the others equal their bound parameters (see `job_keys`)."""
    cols = {"kind": JobRow.kind, "repo": JobRow.repo, "head_sha": JobRow.head_sha,
            "analyzer": JobRow.analyzer, "pr_number": JobRow.pr_number}
    return [col.is_(None) if name in null_keys else col == bindparam(name) for name, col in cols.items()]


@functools.cache
def _debounce_statement(null_keys: tuple[str, ...]) -> Any:
    """SELECT a job doing the same work that makes a forced one (a re-run, an edited comment)
    unnecessary: one still queued (it reads the PR when it runs), or a forced one created
    since :since (the debounce window)."""
    forced = JobRow.spec["force"].as_boolean().is_(True)
    return select(JobRow.id).where(*job_conditions(null_keys), or_(
        JobRow.status == "queued", and_(JobRow.created_at >= bindparam("since"), forced))).limit(1)


_ONCE = select(JobRow.id).where(JobRow.kind == bindparam("kind"), JobRow.repo == bindparam("repo"),
                                JobRow.spec["once"].as_string() == bindparam("once")).limit(1)


@functools.cache
def _same_job_statement(null_keys: tuple[str, ...]) -> Any:
    """SELECT a queued or running job doing the same work, with bound parameters (built once
    per shape: a key that is None compares with IS NULL, so that an index can still serve)."""
    return select(JobRow.id).where(*job_conditions(null_keys), JobRow.status.in_(ACTIVE)).limit(1)


def job_keys(spec: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """(the keys of `spec` that are None, the others' values): what identifies its work."""
    keys = {"kind": spec["kind"], "repo": spec["repo"], "head_sha": spec.get("head_sha"),
            "analyzer": spec.get("analyzer"), "pr_number": spec.get("pr_number")}
    return (tuple(k for k in _NULLABLE_KEYS if keys[k] is None),
            {k: v for k, v in keys.items() if v is not None})


def _tenant_id(spec: dict[str, Any], key: str) -> int | None:
    value = spec.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def insert_job(c: Connection, spec: dict[str, Any], delivery_id: str | None, now: float,
               force_window_s: float = 0.0, *, running: bool = False) -> int | None:
    """Insert a queued job inside the caller's transaction; None when the same work is
    already queued or running. A forced job (a re-run, an edited comment: work to do again
    even where it was done) is made unless the same work is still queued (it reads the PR
    when it runs) or was forced within the last `force_window_s` (a burst of re-runs or
    edits makes one analysis per head and analysis per window). A job with a `once` key (a
    command: its comment's id) is made only if no job of its kind ever had that key. `running`:
    made started (attempt 1, beating), by a `pr` job that runs it itself (no worker claims it)."""
    shape, params = job_keys(spec)
    if spec.get("once"):
        if c.scalar(_ONCE, {"kind": spec["kind"], "repo": spec["repo"], "once": str(spec["once"])}) is not None:
            return None
    elif spec.get("force"):
        if c.scalar(_debounce_statement(shape), {**params, "since": now - force_window_s}) is not None:
            return None
    elif c.scalar(_same_job_statement(shape), params) is not None:
        return None
    keys = {k: params.get(k) for k in ("kind", "repo", "head_sha", "analyzer", "pr_number")}
    res = c.execute(INSERT_JOB, {
        **keys, "delivery_id": delivery_id, "spec": spec, "status": "running" if running else "queued",
        "attempts": int(running), "heartbeat_at": now if running else None, "created_at": now, "updated_at": now,
        "llm_requests": 0, "llm_tokens": 0,
        "repository_id": _tenant_id(spec, "repository_id"), "installation_id": _tenant_id(spec, "installation_id")})
    key = res.inserted_primary_key
    if key is None:
        raise RuntimeError("the database returned no id for the new job")
    return int(key[0])


class Jobs:
    """A job's life in the jobs table: made, marked unsent, started, kept alive, finished,
    requeued, cancelled; and a job looked up by its id or columns."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, spec: dict[str, Any], delivery_id: str | None = None, *,
            force_window_s: float = 0.0, running: bool = False) -> int | None:
        """Insert a queued job (or a started one: `running`); None when the same work is already
        queued or running (see `insert_job`)."""
        with self.db.writing() as c:
            return insert_job(c, spec, delivery_id, time.time(), force_window_s, running=running)

    def expedite(self, job_ids: Sequence[int]) -> None:
        """Mark queued jobs whose message could not be sent as unsent (updated_at = UNSENT):
        the sending process retries them within seconds (bot/app/sweep.py `Resender`), the next
        sweep sends them (they look older than `requeue_after_s`), and a later delivery of the
        same work sends them (`unsent_like`) instead of being taken as a duplicate."""
        if job_ids:
            with self.db.writing() as c:
                c.execute(update(JobRow).where(JobRow.id.in_(list(job_ids)), JobRow.status == "queued")
                          .values(updated_at=UNSENT))

    def mark_sent(self, job_ids: Sequence[int]) -> None:
        """The messages of these unsent jobs went out: clear the mark."""
        if job_ids:
            with self.db.writing() as c:
                c.execute(update(JobRow).where(JobRow.id.in_(list(job_ids)), JobRow.status == "queued",
                                               JobRow.updated_at == UNSENT).values(updated_at=time.time()))

    def charge(self, job_id: int, n: int) -> None:
        """Record on a command's job that it spent: its author's `n`th charged command of the day
        (the App's ledger counts these, whatever the verb)."""
        with self.db.session() as s:
            row = s.get(JobRow, job_id)
            if row is not None:
                row.spec = {**row.spec, CHARGED: n}

    def get(self, job_id: int) -> JobRow | None:
        with self.db.session() as s:
            return s.get(JobRow, job_id)

    def where(self, **where: Any) -> list[JobRow]:
        """The jobs whose columns equal `where`'s values, oldest first."""
        with self.db.session() as s:
            q = select(JobRow).order_by(JobRow.id)
            for k, v in where.items():
                q = q.where(getattr(JobRow, k) == v)
            return list(s.scalars(q))

    def start(self, job_id: int) -> JobRow | None:
        """queued → running, atomically; None when another worker has it or it is over."""
        now = time.time()
        with self.db.session() as s:
            res = s.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "queued")
                            .values(status="running", attempts=JobRow.attempts + 1,
                                    heartbeat_at=now, updated_at=now))
            if res.rowcount != 1:  # type: ignore[attr-defined]
                return None
            return s.get(JobRow, job_id)

    def heartbeat(self, job_id: int) -> None:
        with self.db.session() as s:
            s.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "running")
                      .values(heartbeat_at=time.time()))

    def finish(self, job_id: int, status: str, result: str | None = None, *,
               duration_s: float | None = None, usage: dict[str, int] | None = None,
               attempt: int | None = None) -> bool:
        """Record a job's end; False when `attempt` is given and is no longer the job's latest
        (the sweep took the job from a worker it thought dead and gave it to another attempt:
        the latest attempt's status stands)."""
        usage = usage or {}
        where = [JobRow.id == job_id]
        if attempt is not None:
            where.append(JobRow.attempts == attempt)
        with self.db.session() as s:
            res = s.execute(update(JobRow).where(*where)
                            .values(status=status, result=result, updated_at=time.time(), duration_s=duration_s,
                                    llm_requests=int(usage.get("requests", 0)),
                                    llm_tokens=int(usage.get("tokens", 0)),
                                    llm_prompt_tokens=int(usage.get("prompt_tokens", 0)),
                                    llm_completion_tokens=int(usage.get("completion_tokens", 0)),
                                    llm_cached_tokens=int(usage.get("cached_prompt_tokens", 0))))
            return res.rowcount == 1  # type: ignore[attr-defined,no-any-return]

    def status(self, job_id: int) -> str | None:
        with self.db.session() as s:
            return s.scalar(select(JobRow.status).where(JobRow.id == job_id))

    def cancel_older(self, repo: str, pr_number: int, head_sha: str, root: int) -> list[JobRow]:
        """Cancel the queued jobs of this PR for another head SHA that come from an older
        delivery than job `root` (a job's root: the `pr` job that fanned it out, or itself)."""
        with self.db.session() as s:
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
        with self.db.session() as s:
            return s.scalar(select(JobRow.head_sha).where(
                JobRow.repo == repo, JobRow.pr_number == pr_number, JobRow.kind == "pr",
                JobRow.head_sha != head_sha, JobRow.id > job_id).order_by(JobRow.id.desc()).limit(1))

    def requeue(self, job_id: int, expect: str, attempts: int | None = None) -> bool:
        """Put a job back to queued (from `expect`), atomically. `attempts`: only while it is
        still the attempt the caller saw (a sweep that saw attempt N stale must not requeue
        attempt N + 1, which another sweep's requeue already started: it would run twice)."""
        where = [JobRow.id == job_id, JobRow.status == expect]
        if attempts is not None:
            where.append(JobRow.attempts == attempts)
        with self.db.session() as s:
            res = s.execute(update(JobRow).where(*where).values(status="queued", updated_at=time.time()))
            return res.rowcount == 1  # type: ignore[attr-defined,no-any-return]
