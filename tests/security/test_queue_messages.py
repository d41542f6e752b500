"""Queue messages are data (bot/app/queue_messages.py), on the SQLite queue and on Redis.

Attack covered: write access to the queue's storage as code execution in the worker that holds
the App's key. On f32233f a message was a pickle (huey's default), and the worker unpickled
whatever the queue held: a pickle whose `__reduce__` names `os.mkdir` made its directory when
the worker took it. Now a message is JSON naming the one task and one job id, and the worker
refuses anything else unread, with one warning line; a pickle queued by the old code for a real
job is refused the same way, and the sweep sends that job again, as JSON, and it runs.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from huey.registry import Message
from huey.serializer import Serializer

from bot.app.queue import RUN_JOB, TASK_MODULE
from bot.app.queue_messages import FORMAT, JsonMessages, RefusedMessage
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

EDITING = "rtcbot / EditingRTC"
TASK = f"{TASK_MODULE}.{RUN_JOB}"


class Planted:
    """A pickle that makes a directory when it is unpickled (any code would run the same way)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Callable[[str], None], tuple[str]]:
        return os.mkdir, (str(self.path),)


def refused_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused a queue message")]


def test_a_planted_pickle_is_not_run_and_is_reported(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub], tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """The backend's queue (SQLite file, or Redis) holds a pickle someone wrote there, and a
    forged JSON message: the worker runs neither and says so; the App's own work still runs."""
    a = apps(fake_github())
    marker = tmp_path / "the-pickle-ran"
    a.rt.huey.storage.enqueue(pickle.dumps(Planted(marker)))
    a.rt.huey.storage.enqueue(json.dumps({"format": FORMAT, "id": "x", "name": "os.system",
                                          "args": ["touch /tmp/x"], "kwargs": {}}).encode())
    a.gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=1))
    with caplog.at_level(logging.WARNING, logger="bot.app.queue"):
        a.deliver("pull_request", a.gh.pr_event("opened", 1))
        a.run()
    assert not marker.exists()
    assert refused_lines(caplog) == [
        f"refused a queue message ({len(pickle.dumps(Planted(marker)))} bytes): a pickle (huey's format before "
        "rtcbot's messages were JSON); dropped unread (its job, if it named one, is sent again by the sweep)",
        refused_lines(caplog)[1]]
    assert "a rtcbot-job/1 message with a wrong 'name'" in refused_lines(caplog)[1]
    [run] = a.gh.runs(EDITING)
    assert run["status"] == "completed"  # the delivery's own messages are JSON and ran


def test_a_pickle_queued_before_the_upgrade_is_refused_and_its_job_sent_again(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub], caplog: pytest.LogCaptureFixture) -> None:
    """The upgrade: a job's message as the old code queued it (huey's pickle) is dropped unread;
    the job, in the store, is sent again by the sweep once it has waited RTCBOT_REQUEUE_AFTER_S,
    and runs."""
    a = apps(fake_github(), requeue_after_s=0.001)
    a.gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=1))
    a.deliver("pull_request", a.gh.pr_event("opened", 1))
    queued = a.rt.huey.storage.dequeue()  # the JSON message intake sent …
    job_id = JsonMessages(TASK).deserialize(queued).args[0]
    old = Serializer().serialize(Message(id="old", name=TASK, args=(job_id,), kwargs={}, retries=0, retry_delay=0))
    assert old[:1] == b"\x80"  # … and the pickle the old code would have sent instead
    a.rt.huey.storage.enqueue(old)
    with caplog.at_level(logging.WARNING, logger="bot.app.queue"):
        assert a.run() == 0  # refused: nothing ran
    assert len(refused_lines(caplog)) == 1 and "a pickle" in refused_lines(caplog)[0]
    assert a.gh.runs(EDITING) == []
    time.sleep(0.01)
    swept = a.rt.sweep()
    assert swept["resent"] == 1, str(swept)
    a.run()
    [run] = a.gh.runs(EDITING)
    assert run["status"] == "completed"


@pytest.mark.parametrize(("data", "why"), [
    (b"\x80\x04K\x01.", "a pickle"),
    (b"(lp0\nI1\na.", "not rtcbot's JSON job message"),  # pickle protocol 0
    (b'{"format": "rtcbot-job/1", "id": "a", "name": "' + TASK.encode() + b'", "args": [true], "kwargs": {}}',
     "wrong 'args'"),
    (b'{"format": "rtcbot-job/1", "id": "a", "name": "' + TASK.encode() + b'", "args": [1], "kwargs": {"x": 1}}',
     "wrong 'kwargs'"),
    (b'{"format": "rtcbot-job/1", "id": "a", "name": "' + TASK.encode() + b'", "args": [1], "kwargs": {}, '
     b'"on_error": {"name": "os.system"}}', "wrong 'keys'"),
    (b'[1, 2]', "not rtcbot's JSON job message"),
])
def test_only_the_one_message_shape_is_read(data: bytes, why: str) -> None:
    with pytest.raises(RefusedMessage, match=why):
        JsonMessages(TASK).deserialize(data)


def test_a_message_round_trips_and_nothing_else_is_written() -> None:
    m = JsonMessages(TASK)
    msg = Message(id="u1", name=TASK, args=(12,), kwargs={}, retries=0, retry_delay=0)
    data = m.serialize(msg)
    assert json.loads(data)["args"] == [12] and data[:1] == b"{"
    back = m.deserialize(data)
    assert (back.id, back.name, back.args, back.kwargs, back.retries) == ("u1", TASK, (12,), {}, 0)
    with pytest.raises(ValueError, match="carries only"):
        m.serialize(Message(id="u2", name="os.system", args=("x",), kwargs={}))
    with pytest.raises(ValueError, match="carries only"):
        m.serialize((None, False))  # huey's revocations: rtcbot revokes nothing
