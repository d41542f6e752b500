"""Whether the database can do its job, for /healthz and /metrics: every table of the schema is
there (`missing_tables`), and it takes a write (`probe_write`: one row written in a transaction
that is rolled back, so nothing stays). A read (`Database.ping`) answers on a database that
lost a table or can no longer write: a full disk, a read-only replica, revoked grants."""

from __future__ import annotations

from sqlalchemy import insert, inspect

from bot.store.db import Database
from bot.store.schema import Base, WorkerBeatRow

BEATS = Base.metadata.tables[WorkerBeatRow.__tablename__]
PROBE_ID = "rtcbot-health-probe"  # never committed


def missing_tables(db: Database) -> list[str]:
    """The schema's tables the database lacks, by name (none: all there)."""
    with db.engine.connect() as c:
        present = set(inspect(c).get_table_names())
    return sorted(name for name in Base.metadata.tables if name not in present)


def probe_write(db: Database) -> None:
    """Write one heartbeat row and roll it back; the database's error when it cannot write.
    SQLite: BEGIN IMMEDIATE takes the write lock first (a read-only file refuses it)."""
    with db.engine.connect() as c:
        if db.sqlite:
            c.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            c.execute(insert(BEATS).values(id=PROBE_ID, host="-", pid=0, started_at=0.0, beat_at=0.0,
                                           ready=False, queue=None))
        finally:
            c.rollback()
