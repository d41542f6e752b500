"""The `analyze` job: one analyzer on one pull request head, one check run.

Skipped where its budgets are spent (bot/app/budget.py), the config turns it off or its check
run is complete; else, its lease held (bot/app/one_run.py), the review core's `execute`
(bot/core/review.py) over the analysis's Source (bot/app/analysis_source.py: the PR's inputs as
the `pr` job read them, bot/app/fan_out.py, or as read here; the store's dismissals and
qualification records) with its outputs: `Held` (a review superseded or taken over while it
ran is withdrawn), its check run and the further reporters (bot/app/results.py); then its
check run and findings are recorded, its LLM use charged and its answers cached in the store.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from analyzers.context import AnalysisContext
from bot.app import budget, feedback, job_kinds
from bot.app.analysis_source import AnalysisSource
from bot.app.job_kinds import AnalyzeJob, Job
from bot.app.one_run import Held, Lease, one_run
from bot.app.pipeline import JobEnd, JobError
from bot.app.pr_inputs import GithubFactory, PRInputs, PRReader, installation_github
from bot.app.results import outputs, record
from bot.app.settings import ServiceSettings
from bot.core import review as review_core
from bot.core.checks import CheckRuns
from bot.core.config import CONFIG_PATH
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.base import Target
from reporters.check_run import check_name_of

log = logging.getLogger(__name__)


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
        if (unpaid := budget.unpaid(self.settings, self.store, budget.payer_of(job))) is not None:
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
                                 on_published=None if cfg.feedback == "off" else feedback.recorder(
                                     self.store, job, self.reader.head_file(gh, job)))
            held = Held(self.store, row, lease)
            settings = review_core.Settings(self.settings.tools(), lambda _: replace(sel, names=[job.analyzer]),
                                            lambda model: budget.llm_factory(self.settings, self.store, model,
                                                                             budget.payer_of(job)))
            source = AnalysisSource(self.settings, self.store, self.reader, job, gh, inputs)
            ctxs: list[AnalysisContext] = []
            try:
                result = review_core.execute(source, [held, runs, more], settings, on_context=ctxs.append,
                                             target=Target(job.repo, job.pr_number, job.head_sha))
            except review_core.Withdrawn as e:
                return "cancelled", str(e), held.usage
            finally:
                if ctxs:
                    budget.settle(self.store, job, ctxs[0], row.id)
        report = result.reports[0]
        record(self.store, job, check, runs.runs[job.analyzer], runs.sent[job.analyzer], report)
        return "done", json.dumps({"check_run": runs.runs[job.analyzer], "findings": len(report.findings),
                                   "error": report.error}), dict(report.usage)

    def fail_check_run(self, row: JobRow, why: str) -> None:
        """Complete the check run of a failed (or abandoned) analysis as neutral, saying why."""
        try:
            job = job_kinds.from_spec(row.spec)
            if isinstance(job, AnalyzeJob):
                self.checks.fail(installation_github(self.github, job), job, why)
        except Exception:
            log.exception("could not mark the check run of job %s as failed", row.id)


