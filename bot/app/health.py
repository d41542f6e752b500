"""The service's health, as /healthz (and /readyz) answers it and /metrics counts it: the
database and the queue answer, the database has every table and takes a write, the data disk
has RTCBOT_HEALTH_MIN_FREE_MB free (bot/app/vitals.py), at least one worker consuming this
service's queue is live (its heartbeat, bot/store/workers.py, is younger than
RTCBOT_WORKER_STALE_S and names the queue it consumes: bot/app/queue.py identity) and no job
has waited in the queue longer than RTCBOT_HEALTH_MAX_QUEUE_AGE_S. `verdict` is the pure rule;
`check` reads the figures. A worker whose heartbeat names no queue (one started before workers
said theirs) is counted.

/livez is not this: it says only that `rtcbot serve` answers (bot/app/web.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from bot.app.queue import describe, heard_as, identity, ping, same_queue
from bot.app.runtime import Runtime
from bot.app.sweep import why
from bot.app.vitals import data_disk, disk_problem, store_problems


@dataclass
class Health:
    """What /healthz says: `reasons` is empty when all is well."""

    reasons: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.reasons

    def answer(self) -> dict[str, Any]:
        status = {"status": "ok"} if self.ok else {"status": "unhealthy", "reasons": self.reasons}
        return {**status, **self.figures}


def verdict(live_workers: int, oldest_queued_age_s: float | None, *, stale_s: float,
            max_queue_age_s: float, elsewhere: tuple[str, ...] = ()) -> list[str]:
    """The reasons the workers make the service unhealthy, in words (none: healthy).
    `elsewhere`: the queues that live workers consume instead of this service's."""
    reasons: list[str] = []
    if live_workers == 0 and elsewhere:
        queues = ", ".join(sorted(set(elsewhere)))
        reasons.append(f"no live worker on this service's queue: {len(elsewhere)} live worker(s) consume "
                       f"another queue ({queues}); give `rtcbot serve` and `rtcbot worker` the same REDIS_URL "
                       "(or RTCBOT_DATA_DIR for the SQLite queue)")
    elif live_workers == 0:
        reasons.append(f"no live worker: none has beaten its heartbeat in the last {stale_s:g} s "
                       "(is `rtcbot worker` running? RTCBOT_WORKER_STALE_S)")
    if oldest_queued_age_s is not None and oldest_queued_age_s > max_queue_age_s:
        reasons.append(f"the oldest queued job has waited {oldest_queued_age_s:.0f} s, more than "
                       f"RTCBOT_HEALTH_MAX_QUEUE_AGE_S ({max_queue_age_s:g} s)")
    return reasons


def worker_figures(rt: Runtime, now: float | None = None) -> tuple[list[dict[str, Any]], float | None]:
    """(the live workers on this service's queue, the oldest queued job's age in seconds or None)
    from the store."""
    workers, _ = _live_workers(rt, now)
    oldest = rt.store.job_queries.oldest_queued_at()
    now = time.time() if now is None else now
    return workers, None if oldest is None else max(0.0, now - oldest)


def _live_workers(rt: Runtime, now: float | None = None) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """(the live workers on this service's queue, the queues the other live workers consume)."""
    now = time.time() if now is None else now
    try:
        mine = heard_as(rt.queue, rt.settings)
    except Exception:  # the queue does not answer (said by `check`): by the queue in words
        mine = identity(rt.settings)
    rows = rt.store.workers.live(rt.settings.worker_stale_s)
    workers = [{"host": w.host, "pid": w.pid, "started_s_ago": round(now - w.started_at, 1),
                "beat_s_ago": round(now - w.beat_at, 1), "ready": bool(w.ready)}
               for w in rows if same_queue(w.queue, mine)]
    return workers, tuple(str(w.queue) for w in rows if not same_queue(w.queue, mine))


def check(rt: Runtime) -> Health:
    """The database, the queue and the workers, each said."""
    health = Health()
    try:
        rt.store.ping()
        health.figures["database"] = "ok"
        health.figures["schema"] = rt.store.schema_version()  # bot/store/versions.py
    except Exception as e:
        health.figures["database"] = f"error: {type(e).__name__}"
        health.reasons.append(f"the database does not answer ({why(e)})")
    try:
        health.figures["queue"] = {"backend": describe(rt.queue), "pending": ping(rt.queue)}
    except Exception as e:
        health.figures["queue"] = f"error: {type(e).__name__}"
        health.reasons.append(f"the queue does not answer ({why(e)})")
    _disk_and_store(rt, health)
    if health.figures["database"] != "ok":
        return health
    workers, oldest_age = worker_figures(rt)
    elsewhere = () if workers else _live_workers(rt)[1]
    health.figures["workers"] = {"live": len(workers), "list": workers, "on_other_queues": len(elsewhere)}
    health.figures["oldest_queued_job_age_s"] = None if oldest_age is None else round(oldest_age, 1)
    health.figures["waiting_by_installation"] = [
        {"installation": "other" if i is None else i, "queued": n, "oldest_wait_s": round(wait_s, 1)}
        for i, n, wait_s in rt.claims.waiting(top=10)]
    health.reasons += verdict(len(workers), oldest_age, stale_s=rt.settings.worker_stale_s,
                              max_queue_age_s=rt.settings.health_max_queue_age_s, elsewhere=elsewhere)
    return health


def _disk_and_store(rt: Runtime, health: Health) -> None:
    """The data disk's free space (RTCBOT_HEALTH_MIN_FREE_MB) and, when the database answers,
    whether it has every table and takes a write (bot/app/vitals.py)."""
    try:
        disk = data_disk(rt.settings.data_dir)
        health.figures["disk_free_mb"] = round(disk.free_bytes / 2**20, 1)
        problem = disk_problem(disk, rt.settings.health_min_free_mb)
    except OSError as e:
        problem = f"cannot read the data disk's free space ({why(e)})"
    if problem:
        health.reasons.append(problem)
    if health.figures["database"] == "ok":
        problems = store_problems(rt)
        if problems:
            health.figures["database"] = "error: cannot do its job"
            health.reasons += problems
