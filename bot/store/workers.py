"""Worker heartbeats: each `rtcbot worker` process keeps one row (host, pid, when it started, its
last beat, whether its warm-up is over, the queue it consumes), beaten every RTCBOT_HEARTBEAT_S;
/healthz and /metrics count the workers whose beat is recent and who consume their queue. A
worker that stops cleanly removes its row; a row whose beat is a day old (a worker killed) is
dropped by the next beat of any worker."""

from __future__ import annotations

import time

from sqlalchemy import delete, select

from bot.store.db import Database
from bot.store.schema import WorkerBeatRow

FORGET_AFTER_S = 24 * 3600.0


class WorkerBeats:
    """The worker_beats table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def beat(self, worker_id: str, host: str, pid: int, started_at: float, *, ready: bool,
             queue: str | None = None) -> None:
        """Record that the worker `worker_id` (consuming `queue`) is alive now (made on its first beat)."""
        now = time.time()
        with self.db.session() as s:
            row = s.get(WorkerBeatRow, worker_id) or WorkerBeatRow(id=worker_id, host=host, pid=pid,
                                                                   started_at=started_at)
            row.beat_at, row.ready, row.queue = now, ready, queue
            s.add(row)
            s.execute(delete(WorkerBeatRow).where(WorkerBeatRow.beat_at < now - FORGET_AFTER_S))

    def remove(self, worker_id: str) -> None:
        with self.db.session() as s:
            s.execute(delete(WorkerBeatRow).where(WorkerBeatRow.id == worker_id))

    def live(self, within_s: float) -> list[WorkerBeatRow]:
        """The workers that beat within the last `within_s` seconds, oldest first."""
        with self.db.session() as s:
            rows = s.scalars(select(WorkerBeatRow).where(WorkerBeatRow.beat_at >= time.time() - within_s)
                             .order_by(WorkerBeatRow.started_at)).all()
        return list(rows)
