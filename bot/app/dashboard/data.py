"""The dashboard's reads from the store (read-only): one repository's check runs, findings,
jobs and published suggestions over a window of weeks, as the plain rows figures.py takes.

Every read is by GitHub's ids, never by a name: the session grants names under installations
(what GitHub listed when the user signed in); each is the repository the App knows under that
name in that installation now (`store.repositories.live`), and only rows carrying that
repository's id and that installation's id are read. A repository renamed keeps its data under
the new name; one removed or deleted shows nothing; a new repository under a name another
held starts empty."""

from __future__ import annotations

import time
from collections.abc import Mapping

from bot.app.dashboard.figures import Figures, Item, Job, Run, Suggestion, figures, item_checks
from bot.core.dismissals import Dismissal
from bot.store.store import Store

WEEKS = 26  # how far back a page looks
MAX_FINDINGS = 20_000  # findings read for one page, at most (the newest)


def tenant(store: Store, repo: str, installation_id: int) -> int | None:
    """The id of the repository the App serves as `repo` under the installation, or None."""
    return store.repositories.live(repo, int(installation_id))


def dismissals(store: Store, repo: str, installation_id: int) -> list[Dismissal]:
    """The findings and rules the team of `repo` dismissed (by its id as the installation has
    it; none for a name the App does not serve under it), oldest first."""
    rid = tenant(store, repo, installation_id)
    return [] if rid is None else store.dismissals.listed(rid, repo)


def repos_with_data(store: Store, among: Mapping[str, int]) -> set[str]:
    """Those of `among` (the repositories a user signing in can see: name → installation id)
    with at least one check run in the store under that installation."""
    ids = {name: (rid, int(inst)) for name, inst in among.items() if (rid := tenant(store, name, inst)) is not None}
    found = store.checks.repositories_among(ids.values())
    return {name for name, key in ids.items() if key in found}


def load(store: Store, repo: str, installation_id: int, github_url: str, *, weeks: int = WEEKS,
         now: float | None = None) -> Figures:
    """The figures of `repo` as the installation has it (nothing for a name the App does not
    serve under it)."""
    since = (time.time() if now is None else now) - weeks * 7 * 86400
    rid = tenant(store, repo, installation_id)
    if rid is None:
        return figures(repo, [], [], [], [], github_url)
    inst = int(installation_id)
    runs = [Run(id=r.id, name=r.name, head_sha=r.head_sha, pr_number=r.pr_number, scores=dict(r.scores or {}),
                github_id=r.github_id, updated_at=r.updated_at, conclusion=r.conclusion)
            for r in store.checks.completed_since(rid, inst, since)]
    items: list[Item] = []
    checks = item_checks()  # the runs of the analyzers whose dashboard reads findings
    if any(r.name in checks for r in runs):
        items = [Item(run_id=c, path=p, start_line=a, end_line=b, scores=sc, title=t, inconclusive=why)
                 for c, p, a, b, sc, t, why in store.checks.scored_findings(rid, inst, since, checks, MAX_FINDINGS)]
    jobs = [Job(pr_number=p, llm_requests=r, llm_tokens=t, created_at=c, prompt_tokens=pt, completion_tokens=ct,
                cached_tokens=k) for p, r, t, c, pt, ct, k in store.job_queries.usage_since(rid, inst, since)]
    suggestions = [Suggestion(analyzer=a, created_at=c, applied=done) for a, c, done in
                   store.published.since(rid, inst, since)]
    return figures(repo, runs, items, jobs, suggestions, github_url)
