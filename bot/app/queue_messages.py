"""The queue's messages as data: JSON that names the one task and carries one job id, never a
pickle. huey pickles its messages by default, and unpickling runs whatever the bytes say, so
write access to the queue's storage (Redis, or the SQLite file) would be code execution in the
worker that holds the App's key. Here a message is `{"format": "rtcbot-job/1", "id": …, "name":
<the task>, "args": [<job id>], …}` (`JsonMessages`, handed to huey as its `serializer`, huey's
public hook), read back only when it is exactly that; anything else — a pickle queued by a
version before this one, or bytes someone wrote into the queue — is refused unread
(`RefusedMessage`): the worker logs one line naming what it was (never its bytes) and takes the
next (`RefusingDequeue`). Nothing is lost by it: the job a message named lives in the store, and
the sweep sends its message again, as JSON, once it has waited RTCBOT_REQUEUE_AFTER_S
(bot/app/sweep.py; docs/deploy.md, "Upgrade").
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from typing import Any

from huey.registry import Message
from huey.serializer import Serializer

log = logging.getLogger("bot.app.queue")

FORMAT = "rtcbot-job/1"
_NUMBERS = ("retries", "retry_delay", "priority", "timeout", "retry_backoff")  # numbers or null
_NONE = ("on_complete", "on_error", "expires", "expires_resolved", "chord_config")  # rtcbot sets none


class RefusedMessage(ValueError):
    """A queue message that is not one of rtcbot's JSON job messages; read no further."""


def _kind(data: bytes) -> str:
    """What refused bytes look like, in words (never the bytes: a stranger may have written them)."""
    if data[:1] == b"\x80":  # pickle protocol 2 and later (huey's: the highest)
        return "a pickle (huey's format before rtcbot's messages were JSON)"
    return "not rtcbot's JSON job message"


class JsonMessages(Serializer):  # type: ignore[misc]  # huey is untyped
    """huey's serializer for rtcbot's one task: its messages as JSON (see the module's
    docstring). `task`: the one task's name a message may carry."""

    def __init__(self, task: str) -> None:
        super().__init__()
        self.task = task

    def serialize(self, data: Any) -> bytes:
        if not isinstance(data, Message) or data.name != self.task or any(getattr(data, k) for k in _NONE):
            raise ValueError(f"rtcbot's queue carries only {self.task} messages with a job id")
        out: dict[str, Any] = {"format": FORMAT, "id": data.id, "name": data.name, "args": list(data.args),
                               "kwargs": dict(data.kwargs or {}),
                               "eta": data.eta.isoformat() if data.eta is not None else None}
        out.update({k: getattr(data, k) for k in _NUMBERS})
        return json.dumps(out, separators=(",", ":")).encode()

    def deserialize(self, data: bytes) -> Message:
        raw = bytes(data)
        try:
            obj = json.loads(raw.decode("utf-8"))
        except ValueError:
            raise RefusedMessage(_kind(raw)) from None
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise RefusedMessage(_kind(raw))
        return Message(**self._fields(obj))

    def _fields(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The message's fields, each checked; RefusedMessage naming the first that is wrong."""
        args, eta = obj.get("args"), obj.get("eta")
        checks = {
            "name": obj.get("name") == self.task,
            "id": isinstance(obj.get("id"), str) and 0 < len(obj["id"]) <= 64,
            "args": isinstance(args, list) and len(args) == 1 and type(args[0]) is int and args[0] > 0,
            "kwargs": obj.get("kwargs") == {},
            "eta": eta is None or isinstance(eta, str) and len(eta) <= 40,
            **{k: obj.get(k) is None or type(obj.get(k)) in (int, float) for k in _NUMBERS},
            "keys": set(obj) <= {"format", "id", "name", "args", "kwargs", "eta", *_NUMBERS},
        }
        wrong = next((k for k, ok in checks.items() if not ok), None)
        if wrong is not None:
            raise RefusedMessage(f"a {FORMAT} message with a wrong {wrong!r}")
        try:
            when = dt.datetime.fromisoformat(eta) if isinstance(eta, str) else None
        except ValueError:
            raise RefusedMessage(f"a {FORMAT} message with a wrong 'eta'") from None
        return {"id": obj["id"], "name": self.task, "eta": when, "args": (obj["args"][0],), "kwargs": {},
                **{k: obj.get(k) for k in _NUMBERS}}


class RefusingDequeue:
    """Mixed into huey's Huey classes (bot/app/queue.py): `dequeue` (huey's public method, which the
    consumer calls) reads the storage's next message through `deserialize_task` and, for a
    message refused by `JsonMessages`, logs one warning and takes the next one."""

    storage: Any  # huey's
    deserialize_task: Callable[[bytes], Any]  # huey's
    refused = 0  # messages refused by this process (per instance once one is)

    def dequeue(self) -> Any:
        while True:
            data = self.storage.dequeue()
            if data is None:
                return None
            try:
                return self.deserialize_task(data)
            except RefusedMessage as e:
                self.refused += 1
                log.warning("refused a queue message (%d bytes): %s; dropped unread (its job, if it named "
                            "one, is sent again by the sweep)", len(data), e)
