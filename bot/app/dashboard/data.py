"""The dashboard's reads from the store (read-only): one repository's check runs, findings,
jobs and published suggestions over a window of weeks, as the plain rows figures.py takes."""

from __future__ import annotations

import time
from collections.abc import Iterable

from bot.app.dashboard.figures import Figures, Item, Job, Run, Suggestion, figures, item_checks
from bot.store.store import Store

WEEKS = 26  # how far back a page looks
MAX_FINDINGS = 20_000  # findings read for one page, at most (the newest)


def repos_with_data(store: Store, among: Iterable[str]) -> set[str]:
    """Those of `among` (the repositories a user signing in can see) with at least one check
    run in the store."""
    return store.checks.repos_among(among)


def load(store: Store, repo: str, github_url: str, *, weeks: int = WEEKS, now: float | None = None) -> Figures:
    since = (time.time() if now is None else now) - weeks * 7 * 86400
    runs = [Run(id=r.id, name=r.name, head_sha=r.head_sha, pr_number=r.pr_number, scores=dict(r.scores or {}),
                github_id=r.github_id, updated_at=r.updated_at, conclusion=r.conclusion)
            for r in store.checks.completed_since(repo, since)]
    items: list[Item] = []
    checks = item_checks()  # the runs of the analyzers whose dashboard reads findings
    if any(r.name in checks for r in runs):
        items = [Item(run_id=c, path=p, start_line=a, end_line=b, scores=sc, title=t)
                 for c, p, a, b, sc, t in store.checks.scored_findings(repo, since, checks,
                                                                       MAX_FINDINGS)]
    jobs = [Job(pr_number=p, llm_requests=r, llm_tokens=t, created_at=c) for p, r, t, c in
            store.jobs.usage_since(repo, since)]
    suggestions = [Suggestion(analyzer=a, created_at=c, applied=done) for a, c, done in
                   store.published.since(repo, since)]
    return figures(repo, runs, items, jobs, suggestions, github_url)
