"""The `analyze` job: one analyzer on one pull request head, one check run.

Find or create the check run → in_progress → the PR's files (100 per page; no `patch` →
skipped with the reason) and review comments (unless the `pr` job read them for all its
analyses: bot/app/fan_out.py) → the review core with this one analyzer (by name from
analyzers.registry: a new analyzer plugs in here unchanged) → check-run output and annotations
in batches of 50 (bot/app/results.py) → findings stored. The LLM client's cache is the store,
keyed by installation, so a push that leaves a hunk unchanged sends no LLM request for it and no
tenant is served another's answers; each job's LLM use is bounded by its budgets
(bot/app/budget.py).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, head_file_limit
from analyzers.report import AnalyzerReport
from bot.app import budget, feedback, job_kinds
from bot.app.job_kinds import AnalyzeJob, Job
from bot.app.one_run import COMMENTED, Lease, one_run
from bot.app.pipeline import JobEnd, JobError
from bot.app.pr_inputs import GithubFactory, PRInputs, PRReader, installation_github
from bot.app.results import publish_results, record
from bot.app.settings import ServiceSettings
from bot.core import qualification
from bot.core import review as review_core
from bot.core.checks import CheckRuns
from bot.core.config import CONFIG_PATH, LoadedConfig
from bot.core.context import changes_from_github, head_files, unlisted_files
from bot.github import GitHub
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.check_run import check_name
from reporters.diff_filter import DiffFilter

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


@dataclass(frozen=True)
class _Reviewed:
    """An analysis run, its check run started: what publishing it reads."""

    check: str
    inputs: PRInputs
    config: LoadedConfig
    changes: ChangeSet
    result: review_core.Result
    context: AnalysisContext
    check_run: int
    fresh: bool

    @property
    def report(self) -> AnalyzerReport:
        return self.result.reports[0]


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
        """The analysis, its lease held: reviewed, published, recorded."""
        gh = installation_github(self.github, job)
        done = self._review(row, job, gh, inputs)
        if not isinstance(done, _Reviewed):
            return done
        report = done.report
        try:  # the check run is published first; the store's bookkeeping follows
            if self.store.jobs.status(row.id) == "cancelled":
                return "cancelled", "superseded while running", report.usage
            if not lease.held():  # a later attempt of this job took it over
                return "cancelled", "taken over by a later attempt while running", report.usage
            cfg = done.config.config
            out = publish_results(gh, job, done.check_run, report, conclude=done.result.verdict.of,
                                  notes=list(done.result.notes), extra=self.settings.reporters,
                                  diff=DiffFilter.of(done.changes), review_comments=done.inputs.raw_comments.result,
                                  suggestions=cfg.suggestions,
                                  on_published=None if cfg.feedback == "off" else self._recorder(job, gh),
                                  fresh=done.fresh)
        finally:
            self._settle(row, job, done.context)
        record(self.store, job, done.check, done.check_run, out, report)
        return "done", json.dumps({"check_run": done.check_run, "findings": len(report.findings),
                                   "error": report.error}), dict(report.usage)

    def _review(self, row: JobRow, job: AnalyzeJob, gh: GitHub, inputs: PRInputs | None) -> _Reviewed | JobEnd:
        """The analysis, its check run started in progress meanwhile; or why it is skipped. GitHub
        calls overlap: the check run already there and (unless the `pr` job read them) the PR's
        files and review comments load while the config is read."""
        analyzer = registry.get(job.analyzer)
        check = check_name(analyzer.title)
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"job-{row.id}-github") as io:
            found = io.submit(self.checks.existing, gh, job, check)
            inputs = inputs or self.reader.read(io, gh, job)
            cfg = inputs.config
            sel = self.reader.select(cfg, self.settings.analyzers + self.settings.comment_analyzers)
            if not job.explicit and job.analyzer not in sel.names:
                return "skipped", f"{job.analyzer} is turned off in {CONFIG_PATH}", {}
            existing, complete = found.result()
            if complete:
                return "skipped", f"{check} for {job.head_sha[:12]} is already complete", {}
            started = io.submit(self.checks.start, gh, job, analyzer.title, existing)
            p = review_core.plan(cfg, dataclasses.replace(sel, names=[job.analyzer]),
                                 llm=budget.llm_factory(self.settings, self.store, sel.model, payer_of(job)),
                                 standing=lambda: self._standing(job, sel.model),
                                 dismissals=self.store.dismissals.listed(job.repository_id, job.repo))
            files = inputs.files.result()
            changes = changes_from_github(files, cfg)
            unlisted = unlisted_files(len(files), lambda: gh.changed_files(job.repo, job.pr_number))
            change = review_core.Change(
                changes, files=head_files(None, self.reader.head_file(gh, job),
                                          limit=head_file_limit(self.settings.tools())),
                comments=inputs.comments.result,  # only for an analyzer that reads them
                unlisted=unlisted)
            ctxs: list[AnalysisContext] = []
            result = review_core.run(p, change, tools=self.settings.tools(), on_context=ctxs.append)
            cr_id, fresh = started.result()
        return _Reviewed(check, inputs, cfg, changes, result, ctxs[0], cr_id, fresh)

    def _settle(self, row: JobRow, job: AnalyzeJob, ctx: AnalysisContext) -> None:
        """The analysis's usage counted against its daily budgets (bot/app/budget.py), and its LLM answers
        written to the cache, before its job ends."""
        budget.charge(self.store, payer_of(job), ctx)
        try:
            self.store.cache.flush()
        except Exception:
            log.warning("could not write the LLM answers of job %s to the cache", row.id, exc_info=True)

    def _standing(self, job: AnalyzeJob, model: str | None) -> qualification.Standing:
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
