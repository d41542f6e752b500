"""The App's state in one SQL database (SQLAlchemy 2): a SQLite file by default, PostgreSQL
through DATABASE_URL (bot/store/db.py).

`Store` holds the database and one repository per aggregate, each a small class in a module
of its own: `store.deliveries` (webhooks and the jobs they ask for), `store.jobs` (a job's
life) and `store.job_queries` (reads across jobs: unsent, stale, the LLM use),
`store.checks` (check runs and findings), `store.published` (what people did with a
suggestion), `store.usage` (LLM use per installation and day), `store.installations`, `store.repositories`,
`store.qualifications`, `store.cache` (the LLM cache, written behind), `store.workers`
(the workers' heartbeats), `store.dismissals` (the findings and rules a repository's team
dismissed), `store.leases` (one run of an analysis at a time) and `store.llm_failures` (the
failed LLM requests, by reason). The tables are in
bot/store/schema.py. Callers outside bot/store/ never write a query: they call these.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import func, select

from bot.store.alert_figures import failed_analyses, usage_today
from bot.store.cache import LLMCache
from bot.store.checks import Checks
from bot.store.db import Database
from bot.store.deliveries import Deliveries
from bot.store.dismissals import Dismissals
from bot.store.job_queries import JobQueries
from bot.store.jobs import Jobs
from bot.store.leases import Leases
from bot.store.llm_failures import LLMFailures
from bot.store.probe import missing_tables, probe_write
from bot.store.published import Published
from bot.store.qualifications import Qualifications
from bot.store.schema import Delivery, JobRow, LLMUsageRow
from bot.store.sessions import Sessions
from bot.store.tenants import Installations, Repositories
from bot.store.usage import Usage
from bot.store.versions import read_version
from bot.store.workers import WorkerBeats

log = logging.getLogger(__name__)


class Store:
    """The database and its repositories, one per aggregate."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.db = Database(url, create=create)
        self.engine = self.db.engine
        self.deliveries = Deliveries(self.db)
        self.jobs = Jobs(self.db)
        self.job_queries = JobQueries(self.db)
        self.checks = Checks(self.db)
        self.published = Published(self.db)
        self.usage = Usage(self.db)
        self.installations = Installations(self.db)
        self.repositories = Repositories(self.db)  # GitHub's ids of the tenants' repositories
        self.qualifications = Qualifications(self.db)
        self.cache = LLMCache(self.db)
        self.workers = WorkerBeats(self.db)
        self.sessions = Sessions(self.db)  # the dashboard's sign-in sessions
        self.dismissals = Dismissals(self.db)
        self.leases = Leases(self.db)  # one run per repository, head and analyzer at a time
        self.llm_failures = LLMFailures(self.db)  # the workers' failed LLM requests, by reason

    def ping(self) -> None:
        self.db.ping()

    def missing_tables(self) -> list[str]:
        """The schema's tables the database lacks (bot/store/probe.py)."""
        return missing_tables(self.db)

    def alert_figures(self) -> dict[str, Any]:
        """Failed analyses by analyzer, today's LLM use by installation (bot/store/alert_figures.py)
        and the failed LLM requests by reason."""
        return {"failed_analyses": failed_analyses(self.db), "usage_today": usage_today(self.db),
                "llm_failures": self.llm_failures.totals()}

    def probe_write(self) -> None:
        """A write rolled back: the database's error when it cannot write (bot/store/probe.py)."""
        probe_write(self.db)
    def schema_version(self) -> int | None:
        """The database's schema version (bot/store/versions.py); None: made before versions."""
        return read_version(self.engine)

    def close(self) -> None:
        """Write the LLM answers still buffered, then close the engine's connections."""
        try:
            self.cache.flush()
        except Exception:
            log.warning("could not write the last LLM answers to the cache", exc_info=True)
        self.db.dispose()

    def metrics(self) -> dict[str, Any]:
        """Counts for /metrics, read at scrape time (the worker is another process)."""
        with self.db.session() as s:
            deliveries = s.execute(select(Delivery.event, Delivery.status, func.count())
                                   .group_by(Delivery.event, Delivery.status)).all()
            jobs = s.execute(select(JobRow.kind, JobRow.status, func.count(),
                                    func.coalesce(func.sum(JobRow.duration_s), 0.0),
                                    func.coalesce(func.sum(JobRow.llm_requests), 0),
                                    func.coalesce(func.sum(JobRow.llm_tokens), 0))
                             .group_by(JobRow.kind, JobRow.status)).all()
            cache_hits = s.scalar(select(func.coalesce(func.sum(LLMUsageRow.cache_hits), 0)))
        return {"deliveries": [tuple(r) for r in deliveries], "jobs": [tuple(r) for r in jobs],
                "llm_cache_hits": int(cache_hits or 0)}
