"""After a restore from a backup: job ids never repeat those the lost period used.

A dump holds the jobs table's sequence as it was; the jobs made between the dump and the loss
(job 28, say) are gone from the database but not from the logs, the check runs' summaries and
people's memory, and a restored sequence would hand 28 to an unrelated job. `skip_job_ids`
moves the next id to the next multiple of ERA at least ERA past the highest id kept, and leaves
a row at the mark saying so (cancelled, kind `restore`), so the jump is explained where the ids
are read. ERA (a million jobs) is far more than any App makes between two backups, and ids
read as their era: 2000000 is the first job after restoring a backup of 27 jobs."""

from __future__ import annotations

import time

from sqlalchemy import func, insert, select, text

from bot.store.db import Database
from bot.store.schema import Base, JobRow

ERA = 1_000_000
JOBS = Base.metadata.tables[JobRow.__tablename__]


def next_era(highest: int) -> int:
    """The first multiple of ERA at least ERA past `highest`."""
    return -(-(highest + ERA) // ERA) * ERA


def skip_job_ids(db: Database, note: str) -> tuple[int, int]:
    """Move the next job id past a mark; (the highest id kept, the next id)."""
    with db.writing() as c:
        highest = int(c.scalar(select(func.coalesce(func.max(JobRow.id), 0))) or 0)
        first = next_era(highest)
        now = time.time()
        c.execute(insert(JOBS).values(
            id=first - 1, kind="restore", repo="", spec={}, status="cancelled", attempts=0, created_at=now,
            updated_at=now, result=f"restore mark: jobs up to {highest} came from the backup; {note}"))
        if db.dialect == "postgresql":
            c.execute(text("SELECT setval(pg_get_serial_sequence('jobs', 'id'), :v)"), {"v": first - 1})
    return highest, first
