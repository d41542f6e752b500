"""Queue messages are never read (bot/app/queue.py), on the SQLite queue and on Redis.

Attack covered: write access to the queue's storage as code execution in the worker that holds
the App's key. On f32233f a message was a pickle (huey's default), and the worker unpickled
whatever the queue held: a pickle whose `__reduce__` names `os.mkdir` made its directory when
the worker took it. Then a message became JSON naming one task and one job id, refused unless
exactly that. Now a message is only a wake-up: the worker takes it without reading its bytes and
claims its next job from the store, so a planted message can at most wake a worker.

Upgrade covered: the messages the release before this one queued (its JSON job messages, in
huey's places) still get their jobs run by this release's worker.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from bot.app.consumer import Consumer
from bot.app.outage import Outage
from bot.app.queue import LIST_KEY, RedisQueue, SqliteQueue
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

EDITING = "rtcbot / EditingRTC"
# a message exactly as the release before this one's JsonMessages wrote it for job 1
BEFORE = (b'{"format":"rtcbot-job/1","id":"5d2c8f0e9b6a4e1f8c3b2a1d0e9f8a7b","name":"bot.app.jobs.rtcbot.run_job",'
          b'"args":[1],"kwargs":{},"eta":null,"retries":0,"retry_delay":0,"priority":null,"timeout":null,'
          b'"retry_backoff":null}')


class Planted:
    """A pickle that makes a directory when it is unpickled (any code would run the same way)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Callable[[str], None], tuple[str]]:
        return os.mkdir, (str(self.path),)


def plant(a: App, data: bytes) -> None:
    """Write `data` into the App's queue where its messages are, as someone with access could."""
    q = a.rt.queue
    if isinstance(q, RedisQueue):
        q.conn.lpush(LIST_KEY, data)
        return
    assert isinstance(q, SqliteQueue)
    with sqlite3.connect(q.path) as conn:
        conn.execute("insert into task (queue, data, priority) values ('rtcbot', ?, 0.0)", (data,))


def clear(a: App) -> None:
    while a.rt.queue.pending():
        a.rt.queue.wait(0.01)


def test_a_planted_pickle_is_never_read(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub],
                                       tmp_path: Path) -> None:
    """The backend's queue (SQLite file, or Redis) holds a pickle someone wrote there, and a
    forged JSON message naming another task: the worker runs neither; the App's own work runs."""
    a = apps(fake_github())
    marker = tmp_path / "the-pickle-ran"
    plant(a, pickle.dumps(Planted(marker)))
    plant(a, b'{"format": "rtcbot-job/1", "id": "x", "name": "os.system", "args": ["touch /tmp/x"], "kwargs": {}}')
    a.gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=1))
    a.deliver("pull_request", a.gh.pr_event("opened", 1))
    a.run()
    assert not marker.exists()
    assert a.rt.queue.pending() == 0  # taken, unread
    [run] = a.gh.runs(EDITING)
    assert run["status"] == "completed"


def test_a_message_queued_by_the_release_before_still_runs_its_job(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """The upgrade: a job recorded and its message queued by the release before this one (its
    JSON job message, in huey's list or table), then this release's worker starts: the job runs
    and the message is taken."""
    a = apps(fake_github())
    a.gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=1))
    a.deliver("pull_request", a.gh.pr_event("opened", 1))
    [job] = a.rt.store.jobs.where()
    assert job.id == 1 and job.status == "queued"
    clear(a)  # this release's message out, the one the release before wrote in
    plant(a, BEFORE)
    consumer = Consumer(a.rt.queue, a.rt.run_next, Outage("the queue"), a.rt.worker.database, workers=1)
    thread = threading.Thread(target=consumer.loop, daemon=True)
    thread.start()
    try:
        a.gh.wait_for(lambda: any(r["status"] == "completed" for r in a.gh.runs(EDITING))
                      and a.rt.queue.pending() == 0, timeout=60)
    finally:
        consumer.stopping.set()
        thread.join(30)
    assert a.rt.store.jobs.get(job.id).status == "done"  # type: ignore[union-attr]
