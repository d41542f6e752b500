"""Reads over many jobs, for those who watch the queue rather than run a job: the queued jobs
whose message could not be sent (the `Resender`, and a redelivery of the same work: bot/app/
sweep.py, bot/app/intake.py), the jobs a sweep finds stale, the oldest queued job's age
(/healthz), the LLM use of a repository's jobs (the dashboard) and the LLM spend per
repository and day (`rtcbot stats`). A job's own life — made,
sent, started, finished, requeued — is bot/store/jobs.py's `Jobs`.
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select

from bot.store.db import Database
from bot.store.jobs import job_conditions, job_keys
from bot.store.schema import UNSENT, JobRow, RepositoryRow


@functools.cache
def _unsent_statement(null_keys: tuple[str, ...]) -> Any:
    """SELECT a queued job doing the same work whose queue message could not be sent."""
    return select(JobRow.id).where(*job_conditions(null_keys), JobRow.status == "queued",
                                   JobRow.updated_at == UNSENT).limit(1)


class JobQueries:
    """The jobs table read across jobs: unsent, stale, the oldest queued, the LLM use since a time."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def unsent(self, limit: int = 500) -> list[int]:
        """Ids of queued jobs marked unsent, oldest first."""
        with self.db.reading() as c:
            return [int(i) for i in c.scalars(select(JobRow.id).where(
                JobRow.status == "queued", JobRow.updated_at == UNSENT).order_by(JobRow.id).limit(limit))]

    def unsent_like(self, specs: Sequence[dict[str, Any]]) -> list[int]:
        """Ids of the queued, unsent jobs doing the work of `specs` (a delivery merged into
        them: it sends them again)."""
        out: list[int] = []
        with self.db.reading() as c:
            for spec in specs:
                shape, params = job_keys(spec)
                found = c.scalar(_unsent_statement(shape), params)
                if found is not None and int(found) not in out:
                    out.append(int(found))
        return out

    def stale_running(self, stale_after_s: float) -> list[JobRow]:
        cutoff = time.time() - stale_after_s
        with self.db.session() as s:
            return list(s.scalars(select(JobRow).where(JobRow.status == "running",
                                                       JobRow.heartbeat_at < cutoff)))

    def oldest_queued_at(self) -> float | None:
        """When the oldest job still queued was made (None: none is queued)."""
        with self.db.reading() as c:
            at = c.scalar(select(func.min(JobRow.created_at)).where(JobRow.status == "queued"))
        return None if at is None else float(at)

    def stale_queued(self, older_than_s: float) -> list[JobRow]:
        cutoff = time.time() - older_than_s
        with self.db.session() as s:
            return list(s.scalars(select(JobRow).where(JobRow.status == "queued",
                                                       JobRow.updated_at < cutoff)))

    def usage_since(self, repository_id: int, installation_id: int,
                    since: float) -> list[tuple[int | None, int, int, float, int, int, int]]:
        """(pr_number, LLM requests, LLM tokens, created_at, prompt, completion and cached prompt
        tokens: 0 for rows made before the split) of the repository's jobs (by GitHub's ids) made
        since `since` (the dashboard's cost figures)."""
        with self.db.session() as s:
            return [(p, r or 0, t or 0, c, pt or 0, ct or 0, k or 0) for p, r, t, c, pt, ct, k in s.execute(
                select(JobRow.pr_number, JobRow.llm_requests, JobRow.llm_tokens, JobRow.created_at,
                       JobRow.llm_prompt_tokens, JobRow.llm_completion_tokens, JobRow.llm_cached_tokens)
                .where(JobRow.repository_id == repository_id, JobRow.installation_id == installation_id,
                       JobRow.created_at >= since))]

    def spend_by_day(self, repo: str | None = None, since: float = 0.0) -> list[dict[str, Any]]:
        """The LLM spend of each repository served, or of the one served under the name `repo`
        now (joined by GitHub's ids, as `published.served`), per UTC day since `since`: requests,
        prompt, completion and cached prompt tokens (0 for rows made before the split), and
        all tokens; by day, newest first, then by name."""
        q = (select(RepositoryRow.full_name, JobRow.created_at, JobRow.llm_requests, JobRow.llm_prompt_tokens,
                    JobRow.llm_completion_tokens, JobRow.llm_cached_tokens, JobRow.llm_tokens)
             .join(RepositoryRow, (RepositoryRow.id == JobRow.repository_id)
                   & (RepositoryRow.installation_id == JobRow.installation_id))
             .where(RepositoryRow.removed_at.is_(None), JobRow.created_at >= since))
        if repo is not None:
            q = q.where(RepositoryRow.full_name == repo)
        days: dict[tuple[str, str], list[int]] = {}
        with self.db.session() as s:
            for name, at, *figures in s.execute(q):
                day = dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d")
                acc = days.setdefault((day, name), [0] * len(SPEND))
                for i, v in enumerate(figures):
                    acc[i] += int(v or 0)
        return [{"repo": name, "day": day, **dict(zip(SPEND, acc, strict=True))}
                for (day, name), acc in sorted(days.items(), key=lambda kv: (-_ordinal(kv[0][0]), kv[0][1]))]


SPEND = ("requests", "prompt_tokens", "completion_tokens", "cached_prompt_tokens", "tokens")


def _ordinal(day: str) -> int:
    return dt.date.fromisoformat(day).toordinal()
