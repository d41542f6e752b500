"""Leases: one run of one analysis at a time (bot/app/one_run.py). A lease names one piece of
work (a repository, a head SHA, an analyzer: `lease_key`) and its holder (one attempt of one
job); it lasts `ttl_s` from its last renewal (the job's heartbeat renews it), so that a holder
that dies frees it by itself. A later attempt of the same job (a takeover after its worker
died) takes it at once; any other job waits for it to be released or to expire.

Every change is one statement, atomic on SQLite and PostgreSQL alike: two jobs taking a free
lease at once insert the same key and one of them loses (ON CONFLICT DO NOTHING); taking a held
one is an UPDATE whose condition the database checks on the row it locks.
"""

from __future__ import annotations

import time

from sqlalchemy import delete, or_, select, update

from bot.store.db import Database
from bot.store.schema import Base, LeaseRow

LEASES = Base.metadata.tables[LeaseRow.__tablename__]
FORGET_AFTER_S = 24 * 3600.0  # a lease expired this long ago is deleted by the next release


def lease_key(repository_id: int | None, repo: str, head_sha: str, analyzer: str) -> str:
    """The lease of one analyzer on one head of one repository: by GitHub's id of the
    repository (a rename keeps it), by its name where the id is not known."""
    return f"{repository_id if repository_id else repo}:{head_sha}:{analyzer}"


class Leases:
    """The leases table: taken, renewed, checked, released."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._insert = db.insert_on_conflict(LEASES).on_conflict_do_nothing(index_elements=["key"])

    def take(self, key: str, job_id: int, attempt: int, ttl_s: float) -> bool:
        """Take the lease `key` for attempt `attempt` of job `job_id`: True when it was free,
        expired, or held by an earlier attempt of the same job (which a takeover supersedes)."""
        now = time.time()
        values = {"job_id": job_id, "attempt": attempt, "ttl_s": ttl_s, "taken_at": now, "expires_at": now + ttl_s}
        with self.db.writing() as c:
            if c.execute(self._insert, {"key": key, **values}).rowcount == 1:
                return True
            taken = c.execute(update(LeaseRow).where(
                LeaseRow.key == key,
                or_(LeaseRow.expires_at < now, (LeaseRow.job_id == job_id) & (LeaseRow.attempt <= attempt)))
                .values(**values))
            return bool(taken.rowcount == 1)

    def renew(self, job_id: int) -> int:
        """Extend the leases job `job_id` holds by their `ttl_s` from now; how many."""
        with self.db.writing() as c:
            res = c.execute(update(LeaseRow).where(LeaseRow.job_id == job_id)
                            .values(expires_at=time.time() + LeaseRow.ttl_s))
            return int(res.rowcount)

    def holds(self, key: str, job_id: int, attempt: int) -> bool:
        """Whether attempt `attempt` of job `job_id` still holds the lease `key` (it may have
        expired unrenewed while the database was away: it holds it until someone else takes it)."""
        with self.db.reading() as c:
            held = c.execute(select(LeaseRow.job_id, LeaseRow.attempt).where(LeaseRow.key == key)).first()
        return held is not None and (held.job_id, held.attempt) == (job_id, attempt)

    def holder(self, key: str) -> LeaseRow | None:
        """The lease `key` as it is now (None: free)."""
        with self.db.session() as s:
            return s.get(LeaseRow, key)

    def release(self, key: str, job_id: int, attempt: int) -> None:
        """Free the lease `key` if this attempt of this job still holds it; and forget the leases
        whose holders died over FORGET_AFTER_S ago and that nobody took since."""
        with self.db.writing() as c:
            c.execute(delete(LeaseRow).where(LeaseRow.key == key, LeaseRow.job_id == job_id,
                                             LeaseRow.attempt == attempt))
            c.execute(delete(LeaseRow).where(LeaseRow.expires_at < time.time() - FORGET_AFTER_S))
