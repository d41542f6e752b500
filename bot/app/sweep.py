"""Recovery: the store is the truth, the queue only carries job ids. The sweep (run by every
worker every RTCBOT_SWEEP_INTERVAL_S) routes deliveries that were recorded but never routed,
re-enqueues jobs whose worker died (no heartbeat for RTCBOT_STALE_AFTER_S; after
RTCBOT_MAX_ATTEMPTS their check run is completed as neutral with the reason), sends again the
messages of jobs queued too long (lost: RTCBOT_REQUEUE_AFTER_S) or never sent (the queue refused
them: at once), and drops old delivery payloads.

`Resender`: a process whose message the queue refused (Redis away) marks the job unsent and
tries again itself, after 1, 2, 4 … seconds (at most RESEND_MAX_WAIT_S apart) until the queue
takes it, without waiting for a sweep.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.settings import ServiceSettings
from bot.store.schema import JobRow
from bot.store.store import Store

log = logging.getLogger(__name__)

RESEND_FIRST_WAIT_S = 1.0
RESEND_MAX_WAIT_S = 30.0


def why(e: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


class Resender:
    """Sends the messages of jobs marked unsent (`store.jobs.expedite`) from this process, in a
    background thread woken by a failed send: after `first_wait_s`, then doubling up to
    `max_wait_s`, until none is left. One warning when a round fails, one line when the queue
    takes them again."""

    def __init__(self, store: Store, enqueue: Callable[[int], None], *,
                 first_wait_s: float = RESEND_FIRST_WAIT_S, max_wait_s: float = RESEND_MAX_WAIT_S) -> None:
        self.store = store
        self.enqueue = enqueue
        self.first_wait_s = first_wait_s
        self.max_wait_s = max_wait_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._woken = False  # a send failed since the thread last read the store

    def wake(self) -> None:
        """Start retrying (if not already)."""
        with self._lock:
            self._woken = True
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="rtcbot-resend", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        wait, failed = self.first_wait_s, False
        while not self._stop.wait(wait):
            sent: list[int] = []
            with self._lock:
                self._woken = False
            try:
                ids = self.store.jobs.unsent()
                if not ids:
                    with self._lock:
                        if not self._woken:  # else a job was marked after the read: read again
                            self._thread = None
                            return
                    continue
                for job_id in ids:
                    self.enqueue(job_id)
                    sent.append(job_id)
            except Exception as e:
                if not failed:
                    log.warning("the queue still refuses messages (%s); retrying up to every %.0f s",
                                why(e), self.max_wait_s)
                failed, wait = True, min(wait * 2, self.max_wait_s)
            else:
                log.warning("sent %d job(s) the queue had refused", len(sent))
                failed, wait = False, self.first_wait_s
            finally:
                if sent:
                    try:
                        self.store.jobs.mark_sent(sent)
                    except Exception as e:  # the sweep sends them once more: harmless
                        log.warning("could not mark jobs %s as sent (%s)", sent, why(e))
        with self._lock:
            self._thread = None


@dataclass(frozen=True)
class Sweeper:
    """The sweep over one store, with the runtime's ways to route, enqueue and fail."""

    store: Store
    settings: ServiceSettings
    route_delivery: Callable[[str, str, dict[str, Any]], object]  # (id, event, payload)
    send: Callable[[Sequence[int]], object]  # never raises: a refused message is marked unsent
    fail: Callable[[JobRow, str], None]  # complete a job's check run as neutral, saying why

    def __call__(self) -> dict[str, int]:
        """Counts of what it did: deliveries routed, jobs requeued, abandoned, resent, payloads pruned."""
        s, store = self.settings, self.store
        counts = {"deliveries": 0, "requeued": 0, "abandoned": 0, "resent": 0, "pruned": 0}
        for d in store.deliveries.unrouted(older_than_s=min(30.0, s.stale_after_s)):
            try:
                self.route_delivery(d.id, d.event, json.loads(d.payload))
                counts["deliveries"] += 1
            except Exception:
                log.exception("could not route delivery %s", d.id)
        for job in store.jobs.stale_running(s.stale_after_s):
            if job.attempts >= s.max_attempts:
                store.jobs.finish(job.id, "failed", f"abandoned after {job.attempts} attempts")
                self.fail(job, f"The worker running this analysis stopped {job.attempts} times "
                               "(killed or out of memory); rtcbot gave up. Re-run it to try again.")
                counts["abandoned"] += 1
            elif store.jobs.requeue(job.id, expect="running", attempts=job.attempts):
                self.send([job.id])
                counts["requeued"] += 1
        for job in store.jobs.stale_queued(s.requeue_after_s):
            if store.jobs.requeue(job.id, expect="queued"):  # refreshes updated_at (and the unsent mark)
                self.send([job.id])
                counts["resent"] += 1
        try:
            counts["pruned"] = store.deliveries.prune_payloads(s.payload_retention_s)
        except Exception:
            log.warning("could not prune delivery payloads", exc_info=True)
        return counts
