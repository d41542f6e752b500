"""A worker's side of a job: started in the store (one attempt at a time), a heartbeat while it
runs, its work (the pipeline's, bot/app/pipeline.py, for a job from the queue; the analysis's
for one a `pr` job runs, bot/app/fan_out.py), its end recorded; every line it logs names the
job. Durability: the store is the truth, the queue only carries job ids; the sweep
(bot/app/sweep.py) recovers what a dead worker or a lost message left."""

from __future__ import annotations

import gc
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from analyzers import registry
from analyzers.llm.http import preload as preload_llm_http
from bot.app import budget, job_kinds
from bot.app.outage import Outage
from bot.app.pipeline import Handler
from bot.app.service_checks import database_place
from bot.app.settings import ServiceSettings
from bot.app.sweep import why
from bot.core.logs import job_context
from bot.store.db import database_away, error_reason
from bot.store.schema import JobRow
from bot.store.store import Store

log = logging.getLogger(__name__)


def freeze_start_up() -> None:
    """Move what start-up loaded (modules, the embedding model: ~500k objects that live as long
    as the process) out of the garbage collector's reach. Each full collection walked them all
    while holding the interpreter lock: every thread of every job stopped for ~350 ms, a few
    times an hour (bench/e2e_floor.py's App run saw it as one PR at 1.7× its floor)."""
    gc.freeze()


def database_reason(e: BaseException) -> str:
    """A database error in one line: the server's own reason (never SQLAlchemy's three lines)."""
    return error_reason(e) or why(e)


def database_failed(outage: Outage, e: Exception, doing: str) -> float:
    """A database error while `doing`: the database away is the outage's one line (the wait
    before the next try: its backoff); anything else is a warning with its reason."""
    if database_away(e):
        return outage.failed(e)
    log.warning("%s failed (%s)", doing, database_reason(e))
    return outage.max_wait_s


@contextmanager
def heartbeat(store: Store, job_id: int, every_s: float, database: Outage) -> Iterator[None]:
    """Beat the running job's heartbeat every `every_s` while the block runs, and renew the lease
    of the analysis it runs (bot/app/one_run.py)."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every_s):
            try:
                store.jobs.heartbeat(job_id)
                store.leases.renew(job_id)
            except Exception as e:  # the database is away for a moment; the next beat retries
                database_failed(database, e, f"heartbeat of job {job_id}")
            else:
                database.ok()

    threading.Thread(target=beat, name=f"heartbeat-{job_id}", daemon=True).start()
    try:
        yield
    finally:
        stop.set()


class Presence:
    """This worker process's heartbeat row (bot/store/workers.py): beaten every `every_s` until
    `stop` is set, marked ready when its warm-up is over, removed when it stops. `queue`: the
    queue it consumes (bot/app/queue.py heard_as), or how to ask it at each beat (a Redis that
    restarted empty has a new id), so that a serve on another queue does not count it."""

    def __init__(self, store: Store, database: Outage, queue: str | Callable[[], str] | None = None) -> None:
        self.store = store
        self.database = database
        self.ask_queue = queue if callable(queue) else None
        self.queue = None if callable(queue) else queue
        self.host, self.pid, self.started_at = socket.gethostname(), os.getpid(), time.time()
        self.id = f"{self.host}:{self.pid}:{self.started_at:.3f}"
        self.ready = False

    def beat(self) -> float | None:
        """Beat once; None, or after a failure the wait before the next try (the backoff)."""
        if self.ask_queue is not None:
            try:
                self.queue = self.ask_queue()
            except Exception as e:  # the queue is away (its consumer says so): the last answer stands
                log.debug("could not ask the queue its id (%s)", why(e))
        try:
            self.store.workers.beat(self.id, self.host, self.pid, self.started_at, ready=self.ready,
                                    queue=self.queue)
        except Exception as e:
            return database_failed(self.database, e, "the worker's heartbeat")
        self.database.ok()
        return None

    def mark_ready(self) -> None:
        self.ready = True
        self.beat()

    def run(self, every_s: float, stop: threading.Event) -> None:
        """Beat every `every_s`; while the database is away, sooner (its backoff, at most
        `every_s`), so that its return is seen and said promptly."""
        while True:
            backoff = self.beat()
            if stop.wait(every_s if backoff is None else min(every_s, backoff)):
                break
        try:
            self.store.workers.remove(self.id)
        except Exception as e:  # its row ages out
            log.debug("could not remove the worker's heartbeat row (%s)", why(e))


def warm_up_words(settings: ServiceSettings, pmd_ready: bool) -> str:
    """What `Worker.warm_up` warms, in words, for the worker's first line: the embedding model,
    PMD when it runs as a server (RTCBOT_PMD_SERVER not off, PMD installed: `pmd_ready`), the LLM
    endpoint when there is one."""
    parts = ["the embedding model"]
    if pmd_ready and settings.pmd_server != "off":
        parts.append("PMD")
    parts.append("the LLM endpoint" if settings.llm_base_url else "(the embedded model starts on first use)")
    return ", ".join(parts[:-1]) + (", " if settings.llm_base_url else " ") + parts[-1]


class Worker:
    """Runs stored jobs (claimed from the store, or a `pr` job's analyses in its own thread). `fail`:
    what a job that raised leaves on GitHub (an analysis's check run completed, saying why)."""

    def __init__(self, settings: ServiceSettings, store: Store, fail: Callable[[JobRow, str], None]) -> None:
        self.settings = settings
        self.store = store
        self.fail = fail
        self.database = Outage(database_place(settings), reason=database_reason)  # shared by its threads

    def warm_up(self) -> None:
        """Pay the one-off start-up costs before the first job: the embedding model and PMD's
        JVM (CRScore), the LLM client's library (openai), and the HTTP client of the LLM endpoint
        with a first call to it (GET /models; a client and its first request cost ~50 ms of CPU).
        Failures only log: an analyzer that cannot start says why when it runs."""
        try:
            registry.warm_up(registry.ANALYZERS, self.settings.tools())  # each warms what it declares
        except Exception:
            log.warning("warm-up of the analyzers failed; they start on first use", exc_info=True)
        preload_llm_http()  # the embedded model's client too: its server starts on first use, its library now
        if self.settings.llm_base_url:  # the embedded model starts on first use, not here
            try:
                budget.llm_factory(self.settings, self.store, None, None)().check()
            except Exception as e:
                log.warning("the LLM endpoint did not answer at start (%s); jobs will try again", e)
        freeze_start_up()

    def run(self, job_id: int, work: Handler) -> str:
        """Run one job with `work` if it is still queued; its final status."""
        row = self.store.jobs.start(job_id)
        if row is None:
            return self.store.jobs.status(job_id) or "missing"
        return self.run_started(row, work)

    def run_started(self, row: JobRow, work: Handler) -> str:
        """Run a job already started (claimed from the store, or made running by its `pr` job)
        with `work`; its final status."""
        job_id = row.id
        # every line logged while it runs names the job: repo#PR, head, analyzer, id, seconds in
        with job_context(job_id, repo=row.repo, pr=row.pr_number, head=row.head_sha, analyzer=row.analyzer,
                         delivery=row.delivery_id):
            log.info("%s job started (attempt %s)", row.kind, row.attempts)
            status = self._run_started(row, work)
            log.info("%s job ended: %s", row.kind, status)
            return status

    def _run_started(self, row: JobRow, work: Handler) -> str:
        """run_job's work, for a job this attempt has started."""
        job_id = row.id
        t0 = time.monotonic()
        usage: dict[str, int] = {}
        with heartbeat(self.store, job_id, self.settings.heartbeat_s, self.database):
            try:
                status, result, usage = work(row, job_kinds.from_spec(row.spec))
            except Exception as e:
                log.exception("job %s failed", job_id)
                status, result = "failed", f"{type(e).__name__}: {e}"
                self.fail(row, f"rtcbot could not finish this analysis: {e}")
        if not self.store.jobs.finish(job_id, status, result, duration_s=time.monotonic() - t0, usage=usage,
                                      attempt=row.attempts):
            log.warning("job %s attempt %s ended after the sweep gave it to another attempt; "
                        "its status is that attempt's", job_id, row.attempts)
            return self.store.jobs.status(job_id) or "missing"
        return status
