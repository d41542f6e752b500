"""The job queue: huey on a SQLite file by default (no server), on Redis when REDIS_URL is set.

A queue message carries only a job id, as JSON (never a pickle: bot/app/queue_messages.py, which
refuses anything else unread); the job itself (and whether it is done) lives in the
store, so a message lost with a killed worker is recovered by the sweep (bot/app/sweep.py).
`rtcbot worker` consumes it with `QueueConsumer`: huey's consumer, but a queue that goes away is
one line when it goes and one when it is back, with backoff between tries (bot/app/outage.py).

The SQLite queue runs in WAL mode with synchronous=NORMAL, like the store's SQLite database:
a commit is durable when the process that made it is killed (the WAL is in the OS's hands),
and only an OS crash or power cut can take back the last ones; in exchange a commit does not
wait for an fsync, which on a busy disk takes from a fraction of a millisecond to tens of them
(with FULL the webhook's p99 under load was seconds; see bench/webhook_load.py).
"""

from __future__ import annotations

import sqlite3
import urllib.parse
import uuid
from collections.abc import Callable
from typing import Any

from huey import Huey, RedisHuey, SqliteHuey
from huey.consumer import Consumer, Scheduler, Worker
from huey.storage import SqliteStorage

from analyzers.code.paths import private_file
from analyzers.urls import redact_url
from bot.app.outage import Outage
from bot.app.queue_messages import JsonMessages, RefusingDequeue
from bot.app.settings import ServiceSettings
from bot.app.sweep import why

QUEUE_NAME = "rtcbot"
RUN_JOB = "rtcbot.run_job"  # the one task: its message carries a stored job's id


# huey names a task "<its function's module>.<name>"; messages name it so. The module is fixed
# here (where the runner is defined does not matter), as messages queued before the wiring name it.
TASK_MODULE = "bot.app.jobs"


def serve_jobs(huey: Huey, run: Callable[[int], str]) -> None:
    """Register `run` as what a message runs, in a process built to run jobs (the App's runtime,
    last, once the parts `run` reads are built), under the task's one name
    (`<TASK_MODULE>.rtcbot.run_job`)."""
    def run_job(job_id: int) -> str:
        return run(job_id)

    run_job.__module__ = TASK_MODULE
    huey.task(name=RUN_JOB)(run_job)


def enqueue(huey: Huey, job_id: int) -> None:
    """Send a message to run stored job `job_id`. It names the task (registered by `serve_jobs`)
    and carries only the id: the sender needs nothing of what runs it, so the parts that send
    (intake, commands, the sweep) are built before the worker, and a job that makes jobs sends
    them through the queue like a delivery does."""
    task = huey._registry.string_to_task(f"{TASK_MODULE}.{RUN_JOB}")  # huey offers no public lookup by name
    huey.enqueue(task((job_id,), {}))


class WalNormalSqliteStorage(SqliteStorage):  # type: ignore[misc]  # huey is untyped
    """huey's SQLite storage (WAL) with synchronous=NORMAL (huey offers only FULL or OFF)."""

    def _create_connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        return conn


class QueueHuey(RefusingDequeue, SqliteHuey):  # type: ignore[misc]
    storage_class = WalNormalSqliteStorage


class QueueRedisHuey(RefusingDequeue, RedisHuey):  # type: ignore[misc]
    """huey's Redis queue, refusing what is not a JSON job message (bot/app/queue_messages.py)."""


def make_huey(settings: ServiceSettings) -> Huey:
    """The queue, its messages JSON, never pickles (bot/app/queue_messages.py)."""
    messages = JsonMessages(f"{TASK_MODULE}.{RUN_JOB}")
    if settings.redis_url:
        return QueueRedisHuey(QUEUE_NAME, url=settings.redis_url, results=False, utc=True, serializer=messages)
    private_file(settings.data_dir / "queue.sqlite3")  # 0600 in a folder made 0700, like the store
    return QueueHuey(QUEUE_NAME, filename=str(settings.data_dir / "queue.sqlite3"), results=False,
                     utc=True, timeout=30, serializer=messages)


def describe(huey: Huey) -> str:
    return "redis" if isinstance(huey, RedisHuey) else "sqlite"


def ping(huey: Huey) -> int:
    """The number of waiting messages; raises when the queue's storage is unreachable."""
    return int(huey.pending_count())


class QueueUnavailable(RuntimeError):
    """The queue does not answer; the message names the setting to check."""


def place(settings: ServiceSettings) -> str:
    """The queue in words, naming its setting (and never a password)."""
    if settings.redis_url:
        return f"the Redis queue at REDIS_URL={redact_url(settings.redis_url)}"
    return f"the SQLite queue in RTCBOT_DATA_DIR={settings.data_dir}"


def identity(settings: ServiceSettings) -> str:
    """The queue in one string, the same however its URL is written (the port and database
    number said, the host in lower case, no password): a worker's heartbeat names it, and a serve
    counts only the workers on its own queue (bot/app/health.py)."""
    if not settings.redis_url:
        return f"sqlite:{(settings.data_dir / 'queue.sqlite3').resolve()}#{QUEUE_NAME}"
    parts = urllib.parse.urlsplit(settings.redis_url)
    query = urllib.parse.parse_qs(parts.query)
    db = query.get("db", [""])[0] or parts.path.strip("/") or "0"
    if parts.scheme == "unix":
        return f"unix:{parts.path}?db={query.get('db', ['0'])[0]}#{QUEUE_NAME}"
    return f"{parts.scheme}://{(parts.hostname or 'localhost').lower()}:{parts.port or 6379}/{db}#{QUEUE_NAME}"


MARK_KEY = f"rtcbot:queue-id:{QUEUE_NAME}"


def heard_as(huey: Huey, settings: ServiceSettings) -> str:
    """What a worker's heartbeat says of its queue, and what a serve compares it with: the queue
    in words (`identity`) and, on Redis, the id the queue's database holds (made by whichever
    process asks first: `SET NX`), so that one Redis reached by two names (localhost and
    127.0.0.1, a host name and its address) is one queue, and two that look alike are two.
    Raises when the queue does not answer."""
    if not isinstance(huey, RedisHuey):
        return identity(settings)
    conn = huey.storage.conn
    conn.set(MARK_KEY, uuid.uuid4().hex, nx=True)
    mark = conn.get(MARK_KEY)
    return f"{identity(settings)} id={mark.decode() if isinstance(mark, bytes) else mark}"


def same_queue(a: str | None, b: str | None) -> bool:
    """Whether two `heard_as` values name one queue: by the queue's id when both have one, else
    by the queue in words. None (a worker from before heartbeats named queues) matches any."""
    if a is None or b is None:
        return True
    ida, idb = a.partition(" id=")[2], b.partition(" id=")[2]
    return ida == idb if ida and idb else a.partition(" id=")[0] == b.partition(" id=")[0]


def check(huey: Huey, settings: ServiceSettings) -> None:
    """Raise QueueUnavailable, in one line naming REDIS_URL (or RTCBOT_DATA_DIR), when the
    queue does not answer."""
    try:
        ping(huey)
    except Exception as e:
        raise QueueUnavailable(f"cannot reach {place(settings)} ({why(e)})") from None


# -- the consumer: huey's, with a queue outage said in two lines ------------------------------
class QueueWorker(Worker):  # type: ignore[misc]
    """huey 3.5's worker loop, but a queue that does not answer is an `Outage` (one line when it
    goes, one when it is back, backoff between tries) where huey logged a traceback per try."""

    outage: Outage

    def loop(self, now: Any = None) -> None:
        try:
            task = self.huey.dequeue()
        except Exception as e:
            self.stop_flag.wait(self.outage.failed(e))  # a stop (SIGTERM) ends the wait
            return
        self.outage.ok()
        if task is None:
            if not self.huey.storage.blocking:
                self.sleep()
            return
        self.delay = self.default_delay
        try:
            self.huey.execute(task, now)
        except Exception:
            self._logger.exception("Unhandled error during execution of task %s.", task.id)


class IdleScheduler(Scheduler):  # type: ignore[misc]
    """rtcbot schedules nothing (no delayed tasks, no periodic ones: the sweep is its own thread),
    so the scheduler does not read the queue's schedule every second (a traceback a second while
    the queue was away)."""

    def loop(self, now: Any = None) -> None:
        self.stop_flag.wait(self.interval)


class QueueConsumer(Consumer):  # type: ignore[misc]
    """huey's consumer with QueueWorker threads sharing one `outage` and the IdleScheduler."""

    worker_class = QueueWorker
    scheduler_class = IdleScheduler

    def __init__(self, huey: Huey, outage: Outage, **options: Any) -> None:
        self.outage = outage  # before huey's __init__, which makes the workers
        super().__init__(huey, **options)

    def _create_worker(self) -> QueueWorker:
        worker: QueueWorker = super()._create_worker()
        worker.outage = self.outage
        return worker
