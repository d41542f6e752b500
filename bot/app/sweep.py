"""Recovery: the store is the truth, the queue only carries job ids. The sweep (run by every
worker every RTCBOT_SWEEP_INTERVAL_S) routes deliveries that were recorded but never routed,
re-enqueues jobs whose worker died (no heartbeat for RTCBOT_STALE_AFTER_S; after
RTCBOT_MAX_ATTEMPTS their check run is completed as neutral with the reason), sends again the
messages of jobs queued too long (lost: RTCBOT_REQUEUE_AFTER_S) or never sent (the queue refused
them: at once), drops old delivery payloads and the dashboard's expired sessions, and deletes
the data of repositories removed or deleted over RTCBOT_PAYLOAD_RETENTION_S ago.

`Resender`: a process whose message the queue refused (Redis away) marks the job unsent and
tries again itself, after 1, 2, 4 … seconds (at most RESEND_MAX_WAIT_S apart) until the queue
takes it, without waiting for a sweep.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.app.settings import ServiceSettings
from bot.core.logs import job_context, shown
from bot.store.schema import UNSENT, JobRow
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
                ids = self.store.job_queries.unsent()
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

    def __call__(self) -> Swept:
        """What it did: deliveries routed, jobs requeued, abandoned, resent, payloads pruned."""
        s, store, done = self.settings, self.store, Swept()
        for d in store.deliveries.unrouted(older_than_s=min(30.0, s.stale_after_s)):
            try:
                self.route_delivery(d.id, d.event, json.loads(d.payload))
                done.add("deliveries", f"routed delivery {shown(d.id)} ({shown(d.event)}, "
                                       f"recorded {_ago(d.received_at)} ago)")
            except Exception:
                log.exception("could not route delivery %s", shown(d.id))
        for job in store.job_queries.stale_running(s.stale_after_s):
            silent = f"no heartbeat for {_ago(job.heartbeat_at)}"
            if job.attempts >= s.max_attempts:
                store.jobs.finish(job.id, "failed", f"abandoned after {job.attempts} attempts")
                self.fail(job, f"The worker running this analysis stopped {job.attempts} times "
                               "(killed or out of memory); rtcbot gave up. Re-run it to try again.")
                done.add("abandoned", f"gave up job {job.id} after {job.attempts} attempts ({silent})")
            elif store.jobs.requeue(job.id, expect="running", attempts=job.attempts):
                sent = self._send(job)
                done.add("requeued", f"requeued job {job.id} of delivery {shown(job.delivery_id)} ({silent}"
                                     + ("" if sent else "; the queue refused its message: sent again later") + ")")
        for job in store.job_queries.stale_queued(s.requeue_after_s):
            why_again = ("the queue had refused its message" if job.updated_at == UNSENT
                         else f"queued {_ago(job.updated_at)} without a worker taking it")
            # refreshes updated_at (and the unsent mark); said only when the queue took it
            if store.jobs.requeue(job.id, expect="queued") and self._send(job):
                done.add("resent", f"resent job {job.id} of delivery {shown(job.delivery_id)} ({why_again})")
        done.clean_up("pruned", lambda: store.deliveries.prune_payloads(s.payload_retention_s),
                      "prune delivery payloads", "dropped the payloads of {} old deliveries")
        done.clean_up("sessions", store.sessions.prune, "drop expired dashboard sessions",
                      "dropped {} expired dashboard session(s)")
        done.clean_up("forgotten", lambda: store.repositories.forget_expired(s.payload_retention_s),
                      "delete the data of removed repositories",
                      "deleted the data of {} repositories removed or deleted over RTCBOT_PAYLOAD_RETENTION_S ago")
        return done

    def _send(self, job: JobRow) -> bool:
        """Send the job's message; whether the queue took it (a refusal is `send`'s one line,
        naming the job and its delivery)."""
        with job_context(job.id, repo=job.repo, pr=job.pr_number, delivery=job.delivery_id):
            return self.send([job.id]) is not False


def _ago(then: float | None) -> str:
    """Seconds since `then` (time.time()), in words: "95 s"."""
    return "?" if then is None else f"{max(0.0, time.time() - then):.0f} s"


class Swept(dict[str, int]):
    """What one sweep did: counts by kind (deliveries, requeued, abandoned, resent, pruned,
    sessions), and in words (`str`), naming each delivery and job: "requeued job 12 (no heartbeat
    for 95 s); resent job 14 (queued 610 s without a worker taking it)"; "" when it did nothing."""

    def __init__(self) -> None:
        super().__init__(deliveries=0, requeued=0, abandoned=0, resent=0, pruned=0, sessions=0, forgotten=0)
        self.said: list[str] = []

    def add(self, kind: str, words: str, n: int = 1) -> None:
        self[kind] += n
        self.said.append(words)

    def clean_up(self, kind: str, drop: Callable[[], int], what: str, said: str) -> None:
        """Run one clean-up (`drop`: how many it dropped); a failure is one warning, not the
        sweep's end."""
        try:
            n = drop()
        except Exception:
            log.warning("could not %s", what, exc_info=True)
        else:
            if n:
                self.add(kind, said.format(n), n)

    def __str__(self) -> str:
        return "; ".join(self.said)
