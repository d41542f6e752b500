"""The `analyze` job: one analyzer on one pull request head, one check run.

Skipped where its budgets are spent, the config turns it off or its check run is complete;
else, its lease held (bot/app/one_run.py), the review core's `execute` (bot/core/review.py)
over this module's Source — the PR's inputs as the `pr` job read them (bot/app/fan_out.py) or
as read here, the store's dismissals and qualification records — with the analysis's outputs:
its check run (bot/core/checks.py, annotations in batches of 50) and the further reporters
(bot/app/results.py); then its findings are recorded. The LLM client's cache is the store,
keyed by installation, so a push that leaves a hunk unchanged sends no LLM request for it and no
tenant is served another's answers; each job's LLM use is bounded by its budgets
(bot/app/budget.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from analyzers.context import AnalysisContext, head_file_limit
from bot.app import budget, feedback, job_kinds
from bot.app.job_kinds import AnalyzeJob, Job
from bot.app.one_run import COMMENTED, Lease, one_run
from bot.app.pipeline import JobEnd, JobError
from bot.app.pr_inputs import GithubFactory, PRInputs, PRReader, installation_github
from bot.app.results import outputs, record
from bot.app.settings import ServiceSettings
from bot.core import qualification
from bot.core import review as review_core
from bot.core.checks import CheckRuns
from bot.core.config import CONFIG_PATH, LoadedConfig
from bot.core.context import changes_from_github, head_files, unlisted_files
from bot.core.dismissals_file import LoadedDismissals
from bot.github import GitHub
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.base import Target
from reporters.check_run import check_name_of

log = logging.getLogger(__name__)


def payer_of(job: AnalyzeJob) -> budget.Payer | None:
    """Whose daily LLM budgets an analysis spends: its installation's, its pull request's (by
    the repository's id) and its author's (a fork's pushes are its author's); one a review or a
    review comment asked for, its commenter's and the installation's (whoever asks, pays)."""
    if not job.installation_id:
        return None
    if job.reason in COMMENTED:
        return budget.Payer.commenter(job.installation_id, job.author_id)
    return budget.Payer.of(job.installation_id, job.repository_id or job.repo, job.pr_number, job.author_id)


class Analysis:
    """Runs `analyze` jobs; `inputs`: the PR's reads the `pr` job already made, when it runs them."""

    def __init__(self, settings: ServiceSettings, store: Store, github: GithubFactory, checks: CheckRuns,
                 reader: PRReader) -> None:
        self.settings = settings
        self.store = store
        self.github = github
        self.checks = checks
        self.reader = reader

    def __call__(self, row: JobRow, job: Job, inputs: PRInputs | None = None) -> JobEnd:
        if not isinstance(job, AnalyzeJob):
            raise JobError(f"a {job.kind} job is not an analysis")
        if (unpaid := budget.unpaid(self.settings, self.store, payer_of(job))) is not None:
            return "skipped", unpaid, {}  # nothing asked of GitHub: the check run stays as it was
        # one run per check run (bot/app/one_run.py): the lease held from before the check run
        # is touched until it is recorded
        with one_run(self.store, row, job, ttl_s=self.settings.stale_after_s,
                     poll_s=min(1.0, self.settings.heartbeat_s)) as lease:
            if not isinstance(lease, Lease):
                return lease
            try:
                return self._run(row, job, lease, inputs)
            except Exception as e:  # its check run completed while the lease is held, never after
                self.fail_check_run(row, f"rtcbot could not finish this analysis: {e}")
                raise

    def _run(self, row: JobRow, job: AnalyzeJob, lease: Lease, inputs: PRInputs | None) -> JobEnd:
        """The analysis, its lease held: skipped where the config turns it off or its check run
        is complete; else reviewed and published (bot/core/review.py `execute`: its check run
        started in progress while the PR's files load), then recorded."""
        gh, check = installation_github(self.github, job), check_name_of(job.analyzer)
        if check is None:
            raise JobError(f"no analyzer {job.analyzer!r} here")
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"job-{row.id}-github") as io:
            found = io.submit(self.checks.existing, gh, job, check)
            inputs = inputs or self.reader.read(io, gh, job)
            sel = self.reader.select(inputs.config, self.settings.analyzers + self.settings.comment_analyzers)
            if not job.explicit and job.analyzer not in sel.names:
                return "skipped", f"{job.analyzer} is turned off in {CONFIG_PATH}", {}
            existing, complete = found.result()
            if complete:
                return "skipped", f"{check} for {job.head_sha[:12]} is already complete", {}
            cfg = inputs.config.config
            runs, more = outputs(gh, self.checks, job, existing, extra=self.settings.reporters,
                                 suggestions=cfg.suggestions, review_comments=inputs.raw_comments.result,
                                 on_published=None if cfg.feedback == "off" else self._recorder(job, gh))
            held = _Held(self.store, row, lease)
            settings = review_core.Settings(self.settings.tools(), lambda _: replace(sel, names=[job.analyzer]),
                                            lambda model: budget.llm_factory(self.settings, self.store, model,
                                                                             payer_of(job)))
            ctxs: list[AnalysisContext] = []
            try:
                result = review_core.execute(_Source(self, job, gh, inputs), [held, runs, more], settings,
                                             on_context=ctxs.append, target=Target(
                                                 repo=job.repo, number=job.pr_number, head_sha=job.head_sha))
            except review_core.Withdrawn as e:
                return "cancelled", str(e), held.usage
            finally:
                if ctxs:
                    self._settle(row, job, ctxs[0])
        report = result.reports[0]
        record(self.store, job, check, runs.runs[job.analyzer], runs.sent[job.analyzer], report)
        return "done", json.dumps({"check_run": runs.runs[job.analyzer], "findings": len(report.findings),
                                   "error": report.error}), dict(report.usage)

    def _settle(self, row: JobRow, job: AnalyzeJob, ctx: AnalysisContext) -> None:
        """The analysis's usage counted against its daily budgets (bot/app/budget.py), and its LLM answers
        written to the cache, before its job ends."""
        budget.charge(self.store, payer_of(job), ctx)
        try:
            self.store.cache.flush()
        except Exception:
            log.warning("could not write the LLM answers of job %s to the cache", row.id, exc_info=True)

    def standing(self, job: AnalyzeJob, model: str | None) -> qualification.Standing:
        """What the App's database records of the model on the repository (bot/core/qualification.py)."""
        name = qualification.model_name(self.settings.llm_settings(model))
        return qualification.standing_from_store(self.store, job.repo, name)

    def _recorder(self, job: AnalyzeJob, gh: GitHub) -> Callable[[list[dict[str, Any]]], int]:
        """Records what a reporter published on the job's pull request (bot/app/feedback.py), with
        the flagged lines read at the head it was posted on."""
        def record_items(items: list[dict[str, Any]]) -> int:
            return feedback.record(self.store, job.installation_id, job.repo, job.pr_number or 0, job.head_sha,
                                   [feedback.Item(**i) for i in items],
                                   self.reader.head_file(gh, job), repository_id=job.repository_id)

        return record_items

    def fail_check_run(self, row: JobRow, why: str) -> None:
        """Complete the check run of a failed (or abandoned) analysis as neutral, saying why."""
        try:
            job = job_kinds.from_spec(row.spec)
            if isinstance(job, AnalyzeJob):
                self.checks.fail(installation_github(self.github, job), job, why)
        except Exception:
            log.exception("could not mark the check run of job %s as failed", row.id)


class _Held(review_core.Output):
    """Publishes nothing: stops a review whose job was cancelled (superseded) or taken over by a
    later attempt while it ran, before any output publishes it."""

    def __init__(self, store: Store, row: JobRow, lease: Lease) -> None:
        self.store, self.row, self.lease = store, row, lease
        self.usage: dict[str, Any] = {}

    def publish(self, result: review_core.Result, target: Target) -> None:
        self.usage = dict(result.reports[0].usage) if result.reports else {}
        if self.store.jobs.status(self.row.id) == "cancelled":
            raise review_core.Withdrawn("superseded while running")
        if not self.lease.held():
            raise review_core.Withdrawn("taken over by a later attempt while running")


@dataclass(frozen=True)
class _Source:
    """What one analysis reads (bot/core/review.py `Source`): the PR's inputs as the `pr` job or
    the PR reader read them, the store's dismissals and qualification records."""

    analysis: Analysis
    job: AnalyzeJob
    gh: GitHub
    inputs: PRInputs

    def config(self) -> LoadedConfig:
        return self.inputs.config

    def dismissals(self, loaded: LoadedConfig) -> LoadedDismissals:
        job = self.job
        return LoadedDismissals(tuple(self.analysis.store.dismissals.listed(job.repository_id, job.repo)))

    def standing(self, model: str | None) -> qualification.Standing:
        return self.analysis.standing(self.job, model)

    def change(self, p: review_core.Plan) -> review_core.Change:
        a, gh, job = self.analysis, self.gh, self.job
        files = self.inputs.files.result()
        return review_core.Change(
            changes_from_github(files, p.loaded),
            files=head_files(None, a.reader.head_file(gh, job), limit=head_file_limit(a.settings.tools())),
            comments=self.inputs.comments.result,  # only for an analyzer that reads them
            unlisted=unlisted_files(len(files), lambda: gh.changed_files(job.repo, job.pr_number)))
