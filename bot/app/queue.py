"""The queue: a wake-up signal for workers, on a SQLite file by default (no server), on Redis
when REDIS_URL is set. The store is the truth about jobs and decides which runs next
(bot/store/claims.py, fair across installations); a message here only says "a job was queued":
a worker woken by one claims the next job from the store, whichever it is, and a worker with
nothing to do claims again every CLAIM_EVERY_S anyway, so a message lost (Redis restarted
empty, a refused send) delays a job by at most that, and loses nothing. An idle claim is one
read of the store (bot/store/claims.py), no write.

A message is rtcbot's JSON job message (`{"format": "rtcbot-job/1", "name": …, "args":
[<job id>], …}`, as the release before this one wrote for huey) in the same place huey kept it
(the Redis list `huey.redis.rtcbot`, the SQLite file's `task` table): a worker of the release
before this one still runs it, and a message that release queued wakes a worker of this one,
which runs its job from the store. A message's bytes are never interpreted (nothing in the
queue chooses what runs: a stranger with write access to it can only wake a worker).

The SQLite queue runs in WAL mode with synchronous=NORMAL, like the store's SQLite database.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Protocol

from analyzers.code.paths import private_file
from analyzers.urls import redact_url
from bot.app.settings import ServiceSettings
from bot.app.sweep import why

QUEUE_NAME = "rtcbot"
LIST_KEY = f"huey.redis.{QUEUE_NAME}"  # where huey kept rtcbot's messages: one place across the upgrade
TASK = "bot.app.jobs.rtcbot.run_job"  # the one task the release before this one's messages named
CLAIM_EVERY_S = 5.0  # an idle worker claims at least this often, woken or not
WAIT_S = 1.0  # the longest one wait on the queue: a worker told to stop sees it within this
POLL_INITIAL_S, POLL_MAX_S = 0.01, 0.05  # the SQLite queue read every 10 ms, backing off to 50 ms


def message(job_id: int) -> bytes:
    """A wake-up for stored job `job_id`, in the JSON format of the release before this one."""
    return json.dumps({"format": "rtcbot-job/1", "id": uuid.uuid4().hex, "name": TASK, "args": [job_id],
                       "kwargs": {}, "eta": None, "retries": 0, "retry_delay": 0, "priority": None,
                       "timeout": None, "retry_backoff": None}, separators=(",", ":")).encode()


class Queue(Protocol):
    backend: str

    def send(self, job_id: int) -> None: ...

    def wait(self, timeout_s: float) -> bool:
        """Take one message, waiting up to `timeout_s`; whether one came. Raises when the
        queue does not answer."""

    def pending(self) -> int:
        """The messages waiting; raises when the queue does not answer."""

    def mark(self) -> str | None:
        """The id the queue's storage holds (Redis; made by the first to ask), or None."""


class RedisQueue:
    backend = "redis"

    def __init__(self, url: str) -> None:
        import redis  # only where REDIS_URL is set: a worker on the SQLite queue never loads it

        self.conn = redis.Redis.from_url(url, socket_timeout=WAIT_S + 10, socket_connect_timeout=5)

    def send(self, job_id: int) -> None:
        self.conn.lpush(LIST_KEY, message(job_id))

    def wait(self, timeout_s: float) -> bool:
        return self.conn.brpop([LIST_KEY], timeout=max(1, round(timeout_s))) is not None

    def pending(self) -> int:
        return int(self.conn.llen(LIST_KEY))

    def mark(self) -> str | None:
        self.conn.set(MARK_KEY, uuid.uuid4().hex, nx=True)
        got = self.conn.get(MARK_KEY)
        return got.decode() if isinstance(got, bytes) else None


class SqliteQueue:
    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.local = threading.local()  # a connection per thread
        self._conn()  # the file and its table made now, as the release before made them

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self.local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("pragma journal_mode=wal")
            conn.execute("pragma synchronous=NORMAL")
            conn.execute("create table if not exists task (id integer not null primary key, queue text not null, "
                         "data blob not null, priority real not null default 0.0)")
            self.local.conn = conn
        return conn

    def send(self, job_id: int) -> None:
        self._conn().execute("insert into task (queue, data, priority) values (?, ?, 0.0)",
                             (QUEUE_NAME, message(job_id)))

    def _take(self) -> bool:
        conn = self._conn()
        row = conn.execute("select id from task where queue = ? order by priority desc, id limit 1",
                           (QUEUE_NAME,)).fetchone()
        return row is not None and conn.execute("delete from task where id = ?", (row[0],)).rowcount == 1

    def wait(self, timeout_s: float) -> bool:
        deadline, delay = time.monotonic() + timeout_s, POLL_INITIAL_S
        while not self._take():
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, POLL_MAX_S)
        return True

    def pending(self) -> int:
        return int(self._conn().execute("select count(*) from task where queue = ?", (QUEUE_NAME,)).fetchone()[0])

    def mark(self) -> str | None:
        return None


def make_queue(settings: ServiceSettings) -> Queue:
    if settings.redis_url:
        return RedisQueue(settings.redis_url)
    private_file(settings.data_dir / "queue.sqlite3")  # 0600 in a folder made 0700, like the store
    return SqliteQueue(settings.data_dir / "queue.sqlite3")


def describe(queue: Queue) -> str:
    return queue.backend


def ping(queue: Queue) -> int:
    """The number of waiting messages; raises when the queue's storage is unreachable."""
    return queue.pending()


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


def heard_as(queue: Queue, settings: ServiceSettings) -> str:
    """What a worker's heartbeat says of its queue, and what a serve compares it with: the queue
    in words (`identity`) and, on Redis, the id the queue's database holds (made by whichever
    process asks first: `SET NX`), so that one Redis reached by two names (localhost and
    127.0.0.1, a host name and its address) is one queue, and two that look alike are two.
    Raises when the queue does not answer."""
    mark = queue.mark()
    return identity(settings) if mark is None else f"{identity(settings)} id={mark}"


def same_queue(a: str | None, b: str | None) -> bool:
    """Whether two `heard_as` values name one queue: by the queue's id when both have one, else
    by the queue in words. None (a worker from before heartbeats named queues) matches any."""
    if a is None or b is None:
        return True
    ida, idb = a.partition(" id=")[2], b.partition(" id=")[2]
    return ida == idb if ida and idb else a.partition(" id=")[0] == b.partition(" id=")[0]


def check(queue: Queue, settings: ServiceSettings) -> None:
    """Raise QueueUnavailable, in one line naming REDIS_URL (or RTCBOT_DATA_DIR), when the
    queue does not answer."""
    try:
        ping(queue)
    except Exception as e:
        raise QueueUnavailable(f"cannot reach {place(settings)} ({why(e)})") from None
