"""Recovery: the store is the truth, the queue only carries job ids. The sweep (run by every
worker every RTCBOT_SWEEP_INTERVAL_S) routes deliveries that were recorded but never routed,
re-enqueues jobs whose worker died (no heartbeat for RTCBOT_STALE_AFTER_S; after
RTCBOT_MAX_ATTEMPTS their check run is completed as neutral with the reason), sends again the
messages of jobs queued too long (lost, or never sent), and drops old delivery payloads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.settings import ServiceSettings
from bot.store import JobRow, Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sweeper:
    """The sweep over one store, with the runtime's ways to route, enqueue and fail."""

    store: Store
    settings: ServiceSettings
    route_delivery: Callable[[str, str, dict[str, Any]], object]  # (id, event, payload)
    enqueue: Callable[[int], None]
    fail: Callable[[JobRow, str], None]  # complete a job's check run as neutral, saying why

    def __call__(self) -> dict[str, int]:
        """Counts of what it did: deliveries routed, jobs requeued, abandoned, resent, payloads pruned."""
        s, store = self.settings, self.store
        counts = {"deliveries": 0, "requeued": 0, "abandoned": 0, "resent": 0, "pruned": 0}
        for d in store.unrouted_deliveries(older_than_s=min(30.0, s.stale_after_s)):
            try:
                self.route_delivery(d.id, d.event, json.loads(d.payload))
                counts["deliveries"] += 1
            except Exception:
                log.exception("could not route delivery %s", d.id)
        for job in store.stale_running(s.stale_after_s):
            if job.attempts >= s.max_attempts:
                store.finish_job(job.id, "failed", f"abandoned after {job.attempts} attempts")
                self.fail(job, f"The worker running this analysis stopped {job.attempts} times "
                               "(killed or out of memory); rtcbot gave up. Re-run it to try again.")
                counts["abandoned"] += 1
            elif store.requeue(job.id, expect="running"):
                self.enqueue(job.id)
                counts["requeued"] += 1
        for job in store.stale_queued(s.requeue_after_s):
            if store.requeue(job.id, expect="queued"):  # refreshes updated_at
                self.enqueue(job.id)
                counts["resent"] += 1
        try:
            counts["pruned"] = store.prune_payloads(s.payload_retention_s)
        except Exception:
            log.warning("could not prune delivery payloads", exc_info=True)
        return counts
