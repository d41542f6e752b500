"""The `pr` job: a pull request head to analyse with every analyzer its repository enables.

The repository's configuration (drafts, which analyzers), older heads cancelled (their check
runs too), then one `analyze` job per enabled analyzer, recorded in the store already started
(no worker claims it) and run right here, at once, each as its own job (started, beaten, ended:
bot/app/worker.py `run_started`, a plain call in a thread of this job's slot) with the analysis
(bot/app/analysis.py), on the PR's files and review comments read once for all of them: no
second trip through the queue, no reading the same PR three times. A worker
that dies midway leaves them to the sweep like any other job; a new attempt of the `pr` job
takes over the analyses the dead one made.
"""

from __future__ import annotations

import functools
import logging
from concurrent.futures import ThreadPoolExecutor

from bot.app import feedback, job_kinds
from bot.app.analysis import Analysis
from bot.app.job_kinds import AnalyzeJob, Job, PRJob
from bot.app.pipeline import Handler, JobEnd, JobError, Runs, named
from bot.app.pr_inputs import GithubFactory, PRInputs, PRReader, installation_github
from bot.app.settings import ServiceSettings
from bot.core.checks import CheckRuns
from bot.github import GitHub
from bot.store.schema import JobRow
from bot.store.store import Store

log = logging.getLogger(__name__)


class FanOut:
    """Runs `pr` jobs: their analyses through `worker`, each with `analysis`."""

    def __init__(self, settings: ServiceSettings, store: Store, github: GithubFactory, checks: CheckRuns,
                 reader: PRReader, worker: Runs, analysis: Analysis) -> None:
        self.settings = settings
        self.store = store
        self.github = github
        self.checks = checks
        self.reader = reader
        self.worker = worker
        self.analysis = analysis

    def __call__(self, row: JobRow, job: Job) -> JobEnd:
        if not isinstance(job, PRJob):
            raise JobError(f"a {job.kind} job is not a pull request's")
        gh = installation_github(self.github, job)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"job-{row.id}-github") as io:
            inputs = self.reader.read(io, gh, job)
            cfg = inputs.config
            if job.draft and not cfg.drafts(self.settings.process_drafts):
                return "skipped", "draft pull request (enable with `drafts: true`)", {}
            newer = self.store.jobs.newer_head(job.repo, job.pr_number, job.head_sha, row.id)
            if newer is not None:
                return "cancelled", f"superseded by {newer}", {}
            if job.action == "synchronize" and cfg.config.feedback != "off":
                self._applied(gh, job)
            for old in self.store.jobs.cancel_older(job.repo, job.pr_number, job.head_sha, row.id):
                if old.kind == "analyze":
                    self.checks.cancel(gh, old.repo, old.analyzer, old.head_sha, job.head_sha)
            made = self._make(row, job, self.reader.select(cfg, self.settings.analyzers).names)
            work = functools.partial(self._child, inputs=inputs)
            with ThreadPoolExecutor(max_workers=max(1, len(made)), thread_name_prefix=f"job-{row.id}") as ex:
                ran = list(ex.map(lambda m: self._run(m[1], m[2], work), made))
        return "done", "analyses: " + (", ".join(f"{name} {status}"
                                                 for (name, _, _), status in zip(made, ran, strict=True))
                                       or "none new"), {}

    def _make(self, row: JobRow, job: PRJob, names: list[str]) -> list[tuple[str, int, bool]]:
        """(analyzer, job id, made started now) of the analyses to run: recorded now, or made by an
        attempt of this job that died (run or reported here)."""
        made: list[tuple[str, int, bool]] = []
        earlier = self._children(row, job)
        for name in names:
            if name in earlier:
                made.append((name, earlier[name], False))
                continue
            child = AnalyzeJob.of(job, name, root=row.id)
            job_id = self.store.jobs.add(job_kinds.to_spec(child), row.delivery_id,
                                         force_window_s=self.settings.force_debounce_s, running=True)
            if job_id is not None:
                made.append((name, job_id, True))
        return made

    def _run(self, job_id: int, started: bool, work: Handler) -> str:
        """Run one analysis: one made started here, or one an earlier attempt made, if it is
        still queued (the sweep may have given it to another worker)."""
        if not started:
            return self.worker.run(job_id, work)
        row = self.store.jobs.get(job_id)
        return self.worker.run_started(row, work) if row is not None else "missing"

    def _child(self, row: JobRow, job: Job, inputs: PRInputs) -> JobEnd:
        """One analysis, as the pipeline runs any job (its repository named first), on `inputs`."""
        named(self.store, row, job)
        return self.analysis(row, job, inputs)

    def _children(self, row: JobRow, job: PRJob) -> dict[str, int]:
        """Analyzer → id of the analysis an earlier attempt of this `pr` job made (none on a first
        attempt). A re-run after a crash takes these over, whatever their state: the sweep may
        have run one already, and making it again would only find its check run complete."""
        if row.attempts <= 1 or row.delivery_id is None:
            return {}
        kids = self.store.jobs.where(delivery_id=row.delivery_id, kind="analyze", head_sha=job.head_sha)
        return {k.analyzer: k.id for k in kids if k.analyzer is not None}

    def _applied(self, gh: GitHub, job: PRJob) -> None:
        """A new head: the pending suggestions whose lines it now holds were taken."""
        try:
            n = feedback.check_applied(self.store, job.repo, job.pr_number, self.reader.head_file(gh, job))
            if n:
                log.info("%s#%s at %s: %d suggestion(s) applied", job.repo, job.pr_number, job.head_sha[:12], n)
        except Exception:  # a record, never a reason to hold the analyses back
            log.warning("could not check which suggestions %s#%s applied", job.repo, job.pr_number, exc_info=True)
