"""An analysis's outputs on the App (bot/core/review.py `execute` drives them): its check run,
by the one lifecycle the Action uses too (bot/core/checks.py `CheckRunsOutput`, over the store's
ledger), so a report gives the same request bodies on both surfaces; then the further reporters
(RTCBOT_REPORTERS, bot/core/outputs.py `Further`), what they published recorded for feedback.
Then the check run is completed in the store, with the report's findings (`record`), retried
for a while when the database is away (RECORD_RETRY_S), so that a database restart does not
leave a published run for the sweep to do again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_delay,
    wait_exponential_jitter,
)

from analyzers.report import AnalyzerReport
from bot.app.job_kinds import AnalyzeJob
from bot.core.checks import CheckRuns, CheckRunsOutput
from bot.core.outputs import Driven, Further
from bot.github import GitHub
from bot.store.db import database_away
from bot.store.store import Store
from reporters.base import Sinks
from reporters.check_run import CheckOutput

log = logging.getLogger(__name__)

RECORD_RETRY_S = 20.0  # recording waits this long for the database (well under stale_after_s)
Published = Callable[[list[dict[str, Any]]], object]  # hears what a further reporter published


def outputs(gh: GitHub, checks: CheckRuns, job: AnalyzeJob, found: int | None, *, extra: Sequence[str] = (),
            suggestions: str = "verified", review_comments: Callable[[], Sequence[dict[str, Any]]] | None = None,
            on_published: Published | None = None) -> tuple[CheckRunsOutput, Further]:
    """The analysis's outputs on the App, in the order `execute` drives them: its check run
    (`found`: its id, None for a new one; a forced job redoes it in place), then the further
    reporters `extra` (RTCBOT_REPORTERS): one that fails is logged, never undoes the check run;
    what one published goes to `on_published`."""
    def heard(done: Driven) -> None:
        if not done.ok:
            log.warning("the %s reporter failed for %s#%s at %s: %s", done.name, job.repo, job.pr_number,
                        job.head_sha[:12], done.reason, exc_info=done.error)
            return
        log.info("%s for %s@%s", done.said, job.repo, job.head_sha[:12])
        if on_published is not None and done.published is not None:
            on_published(done.published)

    sinks = Sinks(github=gh, suggestions=suggestions, review_comments=review_comments)
    return CheckRunsOutput(gh, checks, force=job.force, found={job.analyzer: found}), Further(extra, sinks, heard)


def record(store: Store, job: AnalyzeJob, name: str, cr_id: int, out: CheckOutput,
           report: AnalyzerReport, *, retry_s: float = RECORD_RETRY_S) -> None:
    """The published check run, completed in the store, with the report's findings; tried again
    for up to `retry_s` seconds while the database is away (both writes are idempotent)."""
    def warn(state: RetryCallState) -> None:
        e = state.outcome.exception() if state.outcome else None
        log.warning("could not record check run %s of %s@%s (%s); trying again", cr_id, job.repo,
                    job.head_sha[:12], type(e).__name__)

    for attempt in Retrying(retry=retry_if_exception(database_away), stop=stop_after_delay(retry_s),
                            wait=wait_exponential_jitter(multiplier=0.25, max=4.0, jitter=0.25),
                            before_sleep=warn, reraise=True):
        with attempt:
            cr = store.checks.save(job.repo, name, job.head_sha, github_id=cr_id, status="completed",
                                   conclusion=out.conclusion, scores=dict(report.scores),
                                   pr_number=job.pr_number, annotations=len(out.annotations),
                                   repository_id=job.repository_id, installation_id=job.installation_id)
            store.checks.save_findings(cr.id, report.findings)
