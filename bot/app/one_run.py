"""One run per check run: two analyses of one analyzer on one head never run at once.

An `analyze` job takes the lease of its (repository, head SHA, analyzer) in the store
(bot/store/leases.py) before it touches the check run, and holds it until its check run is
published and recorded; the worker's job heartbeat renews it (bot/app/worker.py), so that the
lease of a worker that died expires `ttl_s` (RTCBOT_STALE_AFTER_S) after its last beat.

Who finds the lease held:
- a later attempt of the same job (the sweep's takeover from a worker that stopped beating)
  takes it at once: the earlier attempt, if it still runs, finds it lost before publishing and
  stops without touching the check run;
- any other job (a `synchronize` and a `rerun` of one head, a Re-run button) waits for it to be
  released or to expire, then runs, and finds the check run the other completed: a job that is
  not forced finds its work done (bot/core/checks.py `existing`); a forced one asked for before
  that run completed is answered by it (`answered`), so the check run is completed once and its
  annotations are never sent twice. A forced job that a review comment asked for runs again
  after the wait (the comment may be newer than what the other run read).

`Held` is the review's first output (bot/app/analysis.py): a review whose lease was lost or
whose job was cancelled while it ran is withdrawn before any output publishes it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bot.app.job_kinds import AnalyzeJob
from bot.app.pipeline import JobEnd
from bot.core import review as review_core
from bot.store.leases import lease_key
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.base import Target
from reporters.check_run import check_name_of

log = logging.getLogger(__name__)

WAIT_AT_MOST_S = 1800.0  # longer than any analysis (the embedded model's take ~4 minutes)
COMMENTED = ("pull_request_review", "pull_request_review_comment")  # forced to read a new comment


@dataclass(frozen=True)
class Lease:
    """The lease one attempt of one job holds."""

    store: Store
    key: str
    job_id: int
    attempt: int

    def held(self) -> bool:
        """Still this attempt's (False: a takeover superseded it: it must not publish)."""
        return self.store.leases.holds(self.key, self.job_id, self.attempt)


@contextmanager
def one_run(store: Store, row: JobRow, job: AnalyzeJob, *, ttl_s: float, poll_s: float) -> Iterator[Lease | JobEnd]:
    """The lease of `job`'s analysis, taken (after waiting for another job's run to end) and
    released when the block ends; or, instead, how the job ends without running: cancelled
    while it waited, waited too long, or answered by the run it waited for."""
    lease = Lease(store, lease_key(job.repository_id, job.repo, job.head_sha, job.analyzer), row.id, row.attempts)
    ended = _wait(lease, ttl_s, poll_s)
    try:
        yield ended or answered(store, row, job) or lease
    finally:
        if ended is None:
            try:
                store.leases.release(lease.key, lease.job_id, lease.attempt)
            except Exception as e:  # it expires by itself
                log.warning("could not release the lease of job %s (%s)", row.id, type(e).__name__)


def _wait(lease: Lease, ttl_s: float, poll_s: float) -> JobEnd | None:
    """Take the lease, waiting while another job holds it; None once taken, else how the job
    ends (cancelled meanwhile, or waited WAIT_AT_MOST_S)."""
    store, deadline, said = lease.store, time.monotonic() + WAIT_AT_MOST_S, False
    while not store.leases.take(lease.key, lease.job_id, lease.attempt, ttl_s):
        if not said:
            other = store.leases.holder(lease.key)
            log.info("waiting for job %s, which runs this analysis now", other.job_id if other else "?")
            said = True
        if store.jobs.status(lease.job_id) == "cancelled":
            return "cancelled", "superseded while waiting for another run of this analysis", {}
        if time.monotonic() >= deadline:
            return "skipped", f"another run of this analysis held it over {WAIT_AT_MOST_S:.0f} s", {}
        time.sleep(poll_s)
    return None


def answered(store: Store, row: JobRow, job: AnalyzeJob) -> JobEnd | None:
    """A forced job (a re-run) whose check run another run completed after it was asked for:
    that run answers it. None for any other job."""
    name = check_name_of(job.analyzer)
    if not job.force or job.reason in COMMENTED or name is None:
        return None
    cr = store.checks.get(job.repo, name, job.head_sha)
    if cr is None or cr.status != "completed" or cr.updated_at < row.created_at:
        return None
    return "skipped", f"{name} for {job.head_sha[:12]} was completed by another run after this one was asked for", {}


class Held(review_core.Output):
    """Publishes nothing: stops a review whose job was cancelled (superseded) or taken over by a
    later attempt while it ran (its lease lost), before any output publishes it."""

    def __init__(self, store: Store, row: JobRow, lease: Lease) -> None:
        self.store, self.row, self.lease = store, row, lease
        self.usage: dict[str, Any] = {}

    def publish(self, result: review_core.Result, target: Target) -> None:
        self.usage = dict(result.reports[0].usage) if result.reports else {}
        if self.store.jobs.status(self.row.id) == "cancelled":
            raise review_core.Withdrawn("superseded while running")
        if not self.lease.held():
            raise review_core.Withdrawn("taken over by a later attempt while running")
