"""Stored jobs sent to the queue by id (bot/app/queue.py `enqueue`): what intake, the commands
and the sweep send through. A message the queue refuses loses nothing: the job stays queued
in the store, marked unsent, and the resender (bot/app/sweep.py) tries again within seconds;
the sweep and a later delivery of the same work send it too. One warning line, no traceback."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from bot.app.sweep import Resender, why
from bot.store.store import Store

log = logging.getLogger(__name__)


class Outbox:
    """Sends job ids with `enqueue`; what it cannot send, `resender` sends later."""

    def __init__(self, store: Store, enqueue: Callable[[int], None], resender: Resender) -> None:
        self.store = store
        self.enqueue = enqueue
        self.resender = resender

    def send(self, job_ids: Sequence[int]) -> bool:
        """Enqueue stored jobs; whether all went."""
        for n, job_id in enumerate(job_ids):
            try:
                self.enqueue(job_id)
            except Exception as e:
                rest = list(job_ids[n:])
                log.warning("could not send job(s) %s to the queue (%s); retrying in the background",
                            ", ".join(map(str, rest)), why(e))
                try:
                    self.store.jobs.expedite(rest)
                except Exception as e2:  # the sweep still sends them, after RTCBOT_REQUEUE_AFTER_S
                    log.warning("could not mark job(s) %s as unsent (%s)", ", ".join(map(str, rest)), why(e2))
                self.resender.wake()
                return False
        return True
