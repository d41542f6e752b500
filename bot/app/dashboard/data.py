"""The dashboard's reads from the store (read-only): one repository's check runs, findings,
jobs and published suggestions over a window of weeks, as the plain rows figures.py takes."""

from __future__ import annotations

import time
from collections.abc import Iterable

from sqlalchemy import select

from bot.app.dashboard.figures import Figures, Item, Job, Run, Suggestion, figures, item_checks
from bot.store.store import CheckRunRow, FindingRow, JobRow, PublishedRow, Store

WEEKS = 26  # how far back a page looks
MAX_FINDINGS = 20_000  # findings read for one page, at most (the newest)
IN_CHUNK = 500  # names in one IN (...) list (SQLite allows 32,766 parameters; PostgreSQL 65,535)


def repos_with_data(store: Store, among: Iterable[str]) -> set[str]:
    """Those of `among` (the repositories a user signing in can see) with at least one check
    run in the store: an index lookup per name (uq_check_run leads with repo), never a scan of
    every repository's check runs."""
    names = sorted(set(among))
    found: set[str] = set()
    with store.session() as s:
        for i in range(0, len(names), IN_CHUNK):
            found.update(s.scalars(select(CheckRunRow.repo).distinct()
                                   .where(CheckRunRow.repo.in_(names[i:i + IN_CHUNK]))))
    return found


def load(store: Store, repo: str, github_url: str, *, weeks: int = WEEKS, now: float | None = None) -> Figures:
    since = (time.time() if now is None else now) - weeks * 7 * 86400
    with store.session() as s:
        runs = [Run(id=r.id, name=r.name, head_sha=r.head_sha, pr_number=r.pr_number, scores=dict(r.scores or {}),
                    github_id=r.github_id, updated_at=r.updated_at, conclusion=r.conclusion)
                for r in s.scalars(select(CheckRunRow).where(
                    CheckRunRow.repo == repo, CheckRunRow.status == "completed", CheckRunRow.updated_at >= since))]
        checks = item_checks()  # the runs of the analyzers whose dashboard reads findings
        ids = [r.id for r in runs if r.name in checks]
        items: list[Item] = []
        if ids:
            q = (select(FindingRow.check_run_id, FindingRow.path, FindingRow.start_line, FindingRow.end_line,
                        FindingRow.scores, FindingRow.data["title"].as_string())
                 .join(CheckRunRow, CheckRunRow.id == FindingRow.check_run_id)
                 .where(CheckRunRow.repo == repo, CheckRunRow.status == "completed", CheckRunRow.updated_at >= since,
                        CheckRunRow.name.in_(checks))
                 .order_by(FindingRow.id.desc()).limit(MAX_FINDINGS))
            items = [Item(run_id=c, path=p, start_line=a, end_line=b, scores=dict(sc or {}), title=t or "")
                     for c, p, a, b, sc, t in s.execute(q)]
        jobs = [Job(pr_number=p, llm_requests=r or 0, llm_tokens=t or 0, created_at=c)
                for p, r, t, c in s.execute(select(JobRow.pr_number, JobRow.llm_requests, JobRow.llm_tokens,
                                                   JobRow.created_at)
                                            .where(JobRow.repo == repo, JobRow.created_at >= since))]
        suggestions = [Suggestion(analyzer=a, created_at=c, applied=applied is not None)
                       for a, c, applied in s.execute(select(PublishedRow.analyzer, PublishedRow.created_at,
                                                             PublishedRow.applied_at)
                                                      .where(PublishedRow.repo == repo,
                                                             PublishedRow.created_at >= since))]
    return figures(repo, runs, items, jobs, suggestions, github_url)
