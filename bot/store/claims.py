"""Claims: a worker takes its next job from the store, fairly across installations.

The store is the truth about jobs, and the order in which they run is decided here, not by a
queue's first-in, first-out (the queue is only a wake-up: bot/app/queue.py). A claim first
reads whether any job is queued at all (an idle worker's claim is that one read, never a write
transaction: on SQLite no write lock taken); then, in one write transaction (SQLite: BEGIN
IMMEDIATE; PostgreSQL: the conditional UPDATE re-checked under its row lock, so two workers
never both take one job):

1. per installation with work (queued or running jobs; jobs with no installation are one
   group), the slots it holds (running jobs that hold a worker: all but the analyses a `pr`
   job runs itself) and its oldest queued job;
2. the installations under their cap (`Fairness.cap`: 0, none) compete by slots held divided by
   their weight (default 1), then by when each was last given a slot (`installation_turns`,
   read for the installations with work only: longest ago first, never first of all), then by
   their oldest queued job: so a free slot goes to the installation holding the fewest, taking
   turns when they hold as many, and an installation alone gets every slot while a burst of one
   never holds another's pull request behind it;
3. its oldest queued job (by id: a job put back by the sweep keeps its place in its
   installation's turn) queued → running, attempt + 1; the installation's turn stamped now.

`waiting` gives the queued jobs and the oldest wait per installation (/healthz, /metrics).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import and_, case, func, or_, select, update
from sqlalchemy.engine import Connection

from bot.store.db import Database
from bot.store.schema import Base, JobRow, TurnRow

TURNS = Base.metadata.tables[TurnRow.__tablename__]
# a running job holds a worker's slot unless it is an analysis its `pr` job runs in its own slot
_HOLDS_SLOT = or_(JobRow.kind != "analyze", JobRow.spec["root"].as_integer().is_(None))


@dataclass(frozen=True)
class Fairness:
    """How claims share the slots: `cap`, the most jobs one installation runs at once across
    all workers (0: no fixed cap); `weights`, an installation's share relative to others (1 when
    not named)."""

    cap: int = 0
    weights: Mapping[int, float] = field(default_factory=dict)

    def weight(self, installation_id: int | None) -> float:
        return self.weights.get(installation_id, 1.0) if installation_id is not None else 1.0


@dataclass(frozen=True)
class Turn:
    """One installation's place in the turn: the slots it holds, its oldest queued job."""

    installation_id: int | None
    holding: int
    oldest_queued: int | None
    served_at: float = 0.0  # when it was last given a slot (0: never)


def pick(turns: list[Turn], fairness: Fairness) -> int | None:
    """The id of the job to run next (pure): the oldest queued job of the installation under its
    cap holding the fewest slots for its weight, the earliest oldest job breaking ties."""
    ready = [t for t in turns if t.oldest_queued is not None and (not fairness.cap or t.holding < fairness.cap)]
    if not ready:
        return None
    best = min(ready, key=lambda t: (t.holding / fairness.weight(t.installation_id), t.served_at,
                                     t.oldest_queued))
    return best.oldest_queued


_WORK = (select(JobRow.installation_id.label("installation_id"),
                func.sum(case((and_(JobRow.status == "running", _HOLDS_SLOT), 1), else_=0)).label("holding"),
                func.min(case((JobRow.status == "queued", JobRow.id), else_=None)).label("oldest_queued"))
         .where(JobRow.status.in_(("queued", "running"))).group_by(JobRow.installation_id).subquery())
# each installation with work, and its turn: looked up by key for those with a queued job, so a
# claim never reads the turns of the (many) installations with nothing queued
_TURNS = (select(_WORK.c.installation_id, _WORK.c.holding, _WORK.c.oldest_queued, TurnRow.served_at)
          .outerjoin(TurnRow, and_(_WORK.c.oldest_queued.is_not(None),
                                   TurnRow.installation_id == func.coalesce(_WORK.c.installation_id, 0))))
_ANY_QUEUED = select(JobRow.id).where(JobRow.status == "queued").limit(1)


def turns(c: Connection) -> list[Turn]:
    return [Turn(None if i is None else int(i), int(h or 0), None if q is None else int(q),
                 0.0 if at is None else float(at))
            for i, h, q, at in c.execute(_TURNS)]


class Claims:
    """The next job for a worker, claimed fairly; and what waits, per installation."""

    def __init__(self, db: Database, fairness: Fairness | None = None) -> None:
        self.db = db
        self.fairness = fairness or Fairness()

    def next(self) -> JobRow | None:
        """Claim the next job (queued → running, attempt + 1); None when none may run now."""
        with self.db.reading() as c:
            if c.scalar(_ANY_QUEUED) is None:  # idle: a read, no write transaction
                return None
        for _ in range(5):  # another worker took the picked job between the read and the write
            with self.db.writing() as c:
                job_id = pick(turns(c), self.fairness)
                if job_id is None:
                    return None
                now = time.time()
                res = c.execute(update(JobRow).where(JobRow.id == job_id, JobRow.status == "queued")
                                .values(status="running", attempts=JobRow.attempts + 1,
                                        heartbeat_at=now, updated_at=now))
                if res.rowcount != 1:
                    continue
                installation = c.scalar(select(JobRow.installation_id).where(JobRow.id == job_id))
                stamp = self.db.insert_on_conflict(TURNS).values(installation_id=int(installation or 0), served_at=now)
                c.execute(stamp.on_conflict_do_update(index_elements=["installation_id"], set_={"served_at": now}))
            with self.db.session() as s:
                return s.get(JobRow, job_id)
        return None

    def waiting(self, top: int = 10) -> list[tuple[int | None, int, float]]:
        """(installation id, queued jobs, the oldest one's wait in seconds) of the `top`
        installations by wait, longest first, then one row for all the others (id None, with
        the jobs of no installation) when there are more."""
        q = (select(JobRow.installation_id, func.count(), func.min(JobRow.created_at))
             .where(JobRow.status == "queued").group_by(JobRow.installation_id))
        now = time.time()
        with self.db.reading() as c:
            rows = sorted(((None if i is None else int(i), int(n), max(0.0, now - float(at)))
                           for i, n, at in c.execute(q)), key=lambda r: -r[2])
        named = [r for r in rows if r[0] is not None]
        head, rest = named[:top], named[top:] + [r for r in rows if r[0] is None]
        if rest:
            head.append((None, sum(r[1] for r in rest), max(r[2] for r in rest)))
        return head
