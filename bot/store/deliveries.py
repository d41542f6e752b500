"""Deliveries: every webhook, recorded with the jobs it asks for in one transaction, so none is
lost and a redelivery (the same X-GitHub-Delivery id) writes nothing. A delivery keeps its
payload until it is routed and the retention has passed; then only its metadata."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from bot.store.db import Database
from bot.store.jobs import insert_job
from bot.store.schema import Base, Delivery

DELIVERIES = Base.metadata.tables[Delivery.__tablename__]


def _merged_note(note: str | None, merged: int) -> str:
    why = (f"{merged} job(s) not made again: the same work is queued or running, or was re-run "
           "within the debounce window")
    return f"{note}; {why}" if note else why


def _insert_jobs(c: Connection, delivery_id: str, jobs: Sequence[dict[str, Any]], note: str | None,
                 now: float, force_window_s: float) -> list[int]:
    """Make the delivery's jobs inside the caller's transaction; the new ones' ids. Those not
    made again (the same work queued or running) are counted in the delivery's note."""
    ids = [i for i in (insert_job(c, spec, delivery_id, now, force_window_s) for spec in jobs) if i is not None]
    if len(ids) != len(jobs):
        c.execute(update(Delivery).where(Delivery.id == delivery_id)
                  .values(jobs=len(ids), note=_merged_note(note, len(jobs) - len(ids))))
    return ids


class Deliveries:
    """The deliveries table: accepted with their jobs, routed later by the sweep, pruned."""

    def __init__(self, db: Database) -> None:
        self.db = db
        stmt = db.upsert(DELIVERIES)
        # INSERT … ON CONFLICT (id) DO NOTHING RETURNING id (a row back: the delivery is new)
        self._insert = (None if stmt is None else
                        stmt.on_conflict_do_nothing(index_elements=["id"]).returning(DELIVERIES.c.id))

    def _insert_new(self, c: Connection, values: dict[str, Any]) -> bool:
        """INSERT the delivery unless its id is there already; whether it was new."""
        if self._insert is not None:
            return c.execute(self._insert, values).first() is not None
        if c.scalar(select(Delivery.id).where(Delivery.id == values["id"])) is not None:
            return False
        c.execute(insert(DELIVERIES), values)
        return True

    def accept(self, delivery_id: str, event: str, action: str | None, payload: bytes | str,
               jobs: Sequence[dict[str, Any]] | None, note: str | None = None, *,
               force_window_s: float = 0.0) -> list[int] | None:
        """Record a delivery and the jobs it asks for, in one transaction; the new jobs' ids, or
        None when this id was seen before (a redelivery: nothing is written).

        `jobs` None: routing failed; the delivery stays `received` for the sweep to route.
        Otherwise it is `routed` (some jobs asked for) or `ignored`, with the number of jobs
        made (a job whose same work is already queued or running is not made again; a forced
        one, see bot/store/jobs.py `insert_job`, neither when the same forced work was asked
        for within `force_window_s`)."""
        body = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        now = time.time()
        status = "received" if jobs is None else ("routed" if jobs else "ignored")
        values = {"id": delivery_id, "event": event, "action": action, "payload": body, "received_at": now,
                  "status": status, "jobs": len(jobs or ()), "note": note}
        try:
            with self.db.writing() as c:
                if not self._insert_new(c, values):
                    return None
                return _insert_jobs(c, delivery_id, jobs or (), note, now, force_window_s)
        except IntegrityError:
            # the same id inserted concurrently, on a dialect without ON CONFLICT
            if self.get(delivery_id) is not None:
                return None
            raise

    def route(self, delivery_id: str, jobs: Sequence[dict[str, Any]], note: str | None = None, *,
              force_window_s: float = 0.0) -> list[int] | None:
        """Route a delivery recorded earlier but not routed (the sweep): mark it and make its
        jobs in one transaction; None when it is no longer `received` (another sweep has it)."""
        now = time.time()
        with self.db.writing() as c:
            res = c.execute(update(Delivery).where(Delivery.id == delivery_id, Delivery.status == "received")
                            .values(status="routed" if jobs else "ignored", jobs=len(jobs), note=note))
            if res.rowcount != 1:
                return None
            return _insert_jobs(c, delivery_id, jobs, note, now, force_window_s)

    def record(self, delivery_id: str, event: str, action: str | None, payload: bytes | str) -> bool:
        """Record a delivery, not routed yet; False when this id was seen before (a redelivery)."""
        return self.accept(delivery_id, event, action, payload, None) is not None

    def recorded(self, delivery_ids: Sequence[str]) -> set[str]:
        """Those of `delivery_ids` (X-GitHub-Delivery GUIDs) the store holds."""
        found: set[str] = set()
        with self.db.session() as s:
            for start in range(0, len(delivery_ids), 500):
                found.update(s.scalars(select(Delivery.id).where(Delivery.id.in_(delivery_ids[start:start + 500]))))
        return found

    def get(self, delivery_id: str) -> Delivery | None:
        with self.db.session() as s:
            return s.get(Delivery, delivery_id)

    def prune_payloads(self, older_than_s: float) -> int:
        """Drop the payloads of routed (or ignored) deliveries received over `older_than_s` ago;
        their rows keep the metadata (id, event, action, status, jobs, note), so a redelivery
        is still recognised. Unrouted deliveries keep theirs for the sweep. How many."""
        cutoff = time.time() - older_than_s
        with self.db.writing() as c:
            res = c.execute(update(Delivery).where(
                Delivery.status.in_(("routed", "ignored")), Delivery.received_at <= cutoff, Delivery.payload != "")
                .values(payload=""))
            return int(res.rowcount or 0)

    def unrouted(self, older_than_s: float) -> list[Delivery]:
        cutoff = time.time() - older_than_s
        with self.db.session() as s:
            return list(s.scalars(select(Delivery).where(Delivery.status == "received",
                                                         Delivery.received_at < cutoff)))
