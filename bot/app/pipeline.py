"""The work of one job, for a worker (bot/app/worker.py): typed jobs (bot/app/events.py) to the
check-run lifecycle (bot/core/checks.py), the review core (bot/core/review.py), publishing
(bot/app/results.py) and the LLM budgets (bot/app/budget.py).

`PRJob`: the repository's configuration (drafts, which analyzers), older heads cancelled, then
one `AnalyzeJob` per enabled analyzer, recorded in the store and run right here, at once, on
the PR's files and review comments read once for all of them (no second trip through the
queue, no reading the same PR three times; a worker that dies midway leaves them to the sweep
like any other job).

`AnalyzeJob`: find or create the check run → in_progress → the PR's files (100 per page; no
`patch` → skipped with the reason) and review comments → the review core with this one
analyzer (by name from analyzers.registry: a new analyzer plugs in here unchanged) → check-run
output and annotations in batches of 50 → findings stored. The LLM client's cache is the
store, keyed by installation, so a push that leaves a hunk unchanged sends no LLM request for
it and no tenant is served another's answers; each job's LLM use is bounded by its budget.

`FeedbackJob`: a pull request closed; `InstallationJob`: an installation's state recorded;
`CommandJob`: a comment addressed to the App, answered by `commands` (bot/app/comment_commands.py).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from analyzers import registry
from analyzers.context import AnalysisContext, ReviewComment, head_file_limit
from analyzers.llm.client import LLMClient
from bot.app import budget, events, feedback
from bot.app.command_events import CommandJob, ProposalJob
from bot.app.events import AnalyzeJob, FeedbackJob, InstallationJob, Job, PRJob, RepositoryJob
from bot.app.results import publish_results, record
from bot.app.settings import ServiceSettings
from bot.core import qualification
from bot.core import review as review_core
from bot.core.checks import CheckRuns
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import (
    Selection,
    changes_from_github,
    comments_from_github,
    head_files,
    select,
    unlisted_files,
)
from bot.github import GitHub, GitHubError, app_identity
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.check_run import check_name
from reporters.diff_filter import DiffFilter

log = logging.getLogger(__name__)

GithubFactory = Callable[[int], GitHub]
JobEnd = tuple[str, str, dict[str, int]]  # (status, result, LLM usage)
RunJob = Callable[[int, "PRInputs | None"], str]
Commands = Callable[[JobRow, CommandJob | ProposalJob], tuple[str, str]]  # a command or proposal job → (status, result)


class JobError(RuntimeError):
    pass


@dataclass
class PRInputs:
    """What every analysis of one head reads from GitHub, read once by the `pr` job."""

    config: LoadedConfig
    files: Future[list[dict[str, Any]]]
    comments: Future[list[ReviewComment]]
    raw_comments: Future[list[dict[str, Any]]]  # as GitHub lists them (the pr-review reporter's markers)


def payer_of(job: AnalyzeJob) -> budget.Payer | None:
    """Whose daily LLM budgets an analysis spends: its installation's, its pull request's (by
    the repository's id) and its author's (a fork's pushes are its author's)."""
    if not job.installation_id:
        return None
    return budget.Payer.of(job.installation_id, job.repository_id or job.repo, job.pr_number, job.author_id)


class Pipeline:
    """The jobs' work: what a worker runs for each job it starts."""

    def __init__(self, settings: ServiceSettings, store: Store, github: GithubFactory, checks: CheckRuns,
                 run_job: RunJob) -> None:
        self.settings = settings
        self.store = store
        self._github = github
        self.checks = checks
        self.run_job = run_job  # the worker's: an analysis the `pr` job makes runs as its own job
        self.commands: Commands | None = None  # the App's answers to commands (set by its Runtime)

    def dispatch(self, row: JobRow, job: Job, inputs: PRInputs | None) -> JobEnd:
        if isinstance(job, InstallationJob):
            if job.installation_id:
                self.store.installations.save(job.installation_id, job.account, job.active)
            return "done", f"installation {job.action}", {}
        if isinstance(job, RepositoryJob):
            return self._repository(row, job)
        if job.repository_id and job.installation_id:  # the name it had when this job was asked for
            self.store.repositories.seen(job.repository_id, job.installation_id, job.repo, row.created_at)
        if isinstance(job, FeedbackJob):
            return self._closed(job)
        if isinstance(job, CommandJob | ProposalJob):
            if self.commands is None:
                raise JobError("this process does not answer commands")
            return (*self.commands(row, job), {})
        if isinstance(job, PRJob):
            return (*self._fan_out(row, job), {})
        return self._analyze(row, job, inputs)

    def _repository(self, row: JobRow, job: RepositoryJob) -> JobEnd:
        """A repository renamed or transferred: its rows follow its id to the new name; deleted or
        removed from the installation: no longer served, deleted after the retention."""
        if not job.installation_id:
            return "done", f"repository {job.action}: no installation", {}
        if job.action in ("deleted", "removed"):
            self.store.repositories.removed(job.repository_id, job.installation_id, job.repo, row.created_at)
            return "done", f"repository {job.repository_id} {job.action}: its data is no longer served", {}
        self.store.repositories.seen(job.repository_id, job.installation_id, job.repo, row.created_at)
        return "done", f"repository {job.repository_id} {job.action}: its data follows it to {job.repo}", {}

    def _gh(self, job: PRJob | AnalyzeJob | FeedbackJob) -> GitHub:
        if not job.installation_id:
            raise JobError("the delivery names no installation")
        return self._github(job.installation_id)

    def _config(self, gh: GitHub, job: PRJob | AnalyzeJob) -> LoadedConfig:
        try:
            text = gh.config_text(job.repo, CONFIG_PATH, job.default_branch)
        except GitHubError as e:
            return LoadedConfig(error=f"could not read {CONFIG_PATH}: {e}")
        return parse_config(text, self.settings.tools())

    def _read_pr(self, io: ThreadPoolExecutor, gh: GitHub, job: PRJob | AnalyzeJob) -> PRInputs:
        """The PR's files and review comments, loading on `io` while the configuration is read."""
        files = io.submit(gh.pr_files, job.repo, job.pr_number)
        raw = io.submit(gh.review_comments, job.repo, job.pr_number)
        comments = io.submit(lambda: comments_from_github(raw.result(), self.owns))
        return PRInputs(self._config(gh, job), files, comments, raw)

    def _select(self, cfg: LoadedConfig, defaults: list[str]) -> Selection:
        """The analyzers, model and notes the configuration gives (bot/core/context.py): the App
        runs no pull request's code, and says so where the file sets a test command."""
        return select(cfg, defaults=defaults, runs_code=False, allowed_models=self.settings.allowed_models)

    def _fan_out(self, row: JobRow, job: PRJob) -> tuple[str, str]:
        gh = self._gh(job)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"job-{row.id}-github") as io:
            inputs = self._read_pr(io, gh, job)
            cfg = inputs.config
            if job.draft and not cfg.drafts(self.settings.process_drafts):
                return "skipped", "draft pull request (enable with `drafts: true`)"
            newer = self.store.jobs.newer_head(job.repo, job.pr_number, job.head_sha, row.id)
            if newer is not None:
                return "cancelled", f"superseded by {newer}"
            if job.action == "synchronize" and cfg.config.feedback != "off":
                self._applied(gh, job)
            for old in self.store.jobs.cancel_older(job.repo, job.pr_number, job.head_sha, row.id):
                if old.kind == "analyze":
                    self.checks.cancel(gh, old.repo, old.analyzer, old.head_sha, job.head_sha)
            made: list[tuple[str, int]] = []
            earlier = self._children(row, job)
            for name in self._select(cfg, self.settings.analyzers).names:
                if name in earlier:  # made by an attempt of this job that died: run or report it
                    made.append((name, earlier[name]))
                    continue
                child = AnalyzeJob.of(job, name, root=row.id)
                job_id = self.store.jobs.add(events.to_spec(child), row.delivery_id,
                                             force_window_s=self.settings.force_debounce_s)
                if job_id is not None:
                    made.append((name, job_id))
            with ThreadPoolExecutor(max_workers=max(1, len(made)), thread_name_prefix=f"job-{row.id}") as ex:
                ran = list(ex.map(lambda m: self.run_job(m[1], inputs), made))
        return "done", "analyses: " + (", ".join(f"{name} {status}"
                                                 for (name, _), status in zip(made, ran, strict=True))
                                       or "none new")

    def _children(self, row: JobRow, job: PRJob) -> dict[str, int]:
        """Analyzer → id of the analysis an earlier attempt of this `pr` job made (none on a first
        attempt). A re-run after a crash takes these over, whatever their state: the sweep may
        have run one already, and making it again would only find its check run complete."""
        if row.attempts <= 1 or row.delivery_id is None:
            return {}
        kids = self.store.jobs.where(delivery_id=row.delivery_id, kind="analyze", head_sha=job.head_sha)
        return {k.analyzer: k.id for k in kids if k.analyzer is not None}

    def _analyze(self, row: JobRow, job: AnalyzeJob, inputs: PRInputs | None) -> JobEnd:
        analyzer = registry.get(job.analyzer)
        check = check_name(analyzer.title)
        gh = self._gh(job)
        # GitHub calls overlap: the check run already there and (unless the `pr` job read them)
        # the PR's files and review comments load while the config is read; the check run is
        # created in progress while the analysis runs
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"job-{row.id}-github") as io:
            found = io.submit(self.checks.existing, gh, job, check)
            inputs = inputs or self._read_pr(io, gh, job)
            cfg = inputs.config
            sel = self._select(cfg, self.settings.analyzers + self.settings.comment_analyzers)
            if not job.explicit and job.analyzer not in sel.names:
                return "skipped", f"{job.analyzer} is turned off in {CONFIG_PATH}", {}
            existing, done = found.result()
            if done:
                return "skipped", f"{check} for {job.head_sha[:12]} is already complete", {}
            started = io.submit(self.checks.start, gh, job, analyzer.title, existing)
            p = review_core.plan(cfg, dataclasses.replace(sel, names=[job.analyzer]),
                                 llm=self.llm_factory(sel.model, payer=payer_of(job)),
                                 refusal=lambda: self._refusal(job, sel.model),
                                 dismissals=self.store.dismissals.listed(job.repository_id, job.repo))
            files = inputs.files.result()
            changes = changes_from_github(files, cfg)
            unlisted = unlisted_files(len(files), lambda: gh.changed_files(job.repo, job.pr_number))
            change = review_core.Change(
                changes, files=head_files(None, self._head_file(gh, job), limit=head_file_limit(self.settings.tools())),
                comments=inputs.comments.result,  # only for an analyzer that reads them
                unlisted=unlisted)
            ctxs: list[AnalysisContext] = []
            result = review_core.run(p, change, tools=self.settings.tools(), on_context=ctxs.append)
            report = result.reports[0]
            cr_id, fresh = started.result()
        try:  # the check run is published first; the store's bookkeeping follows
            if self.store.jobs.status(row.id) == "cancelled":
                return "cancelled", "superseded while running", report.usage
            out = publish_results(gh, job, cr_id, report, conclude=result.verdict.of, notes=list(result.notes),
                                  extra=self.settings.reporters, diff=DiffFilter.of(changes),
                                  review_comments=inputs.raw_comments.result, suggestions=cfg.config.suggestions,
                                  on_published=None if cfg.config.feedback == "off" else self._recorder(job, gh),
                                  fresh=fresh)
        finally:
            self._settle(row, job, ctxs[0])
        record(self.store, job, check, cr_id, out, report)
        return "done", json.dumps({"check_run": cr_id, "findings": len(report.findings),
                                   "error": report.error}), dict(report.usage)

    def _settle(self, row: JobRow, job: AnalyzeJob, ctx: AnalysisContext) -> None:
        """The analysis's usage counted against its daily budgets (bot/app/budget.py), and its LLM answers
        written to the cache, before its job ends."""
        budget.charge(self.store, payer_of(job), ctx)
        try:
            self.store.cache.flush()
        except Exception:
            log.warning("could not write the LLM answers of job %s to the cache", row.id, exc_info=True)

    def _refusal(self, job: AnalyzeJob, model: str | None) -> str | None:
        """Under `require_qualified: true`: why the App's database does not record the model as
        qualified for the repository (bot/core/qualification.py); None when it does."""
        name = qualification.model_name(self.settings.llm_settings(model))
        return qualification.refusal_from_store(self.store, job.repo, name)

    def _closed(self, job: FeedbackJob) -> JobEnd:
        """A pull request closed: merged or not, and the reactions on the bot's suggestions."""
        if not self.store.published.rows(job.repo, job.pr_number):
            return "done", "nothing of rtcbot's to follow on this pull request", {}
        gh = self._gh(job)
        n = feedback.mark_closed(self.store, job.repo, job.pr_number, job.merged,
                                 gh.review_comments(job.repo, job.pr_number), self.owns,
                                 lambda cid: gh.review_comment_reactions(job.repo, cid))
        return "done", f"{n} suggestion(s) followed to the end ({'merged' if job.merged else 'closed'})", {}

    def _applied(self, gh: GitHub, job: PRJob) -> None:
        """A new head: the pending suggestions whose lines it now holds were taken."""
        try:
            n = feedback.check_applied(self.store, job.repo, job.pr_number, self._head_file(gh, job))
            if n:
                log.info("%s#%s at %s: %d suggestion(s) applied", job.repo, job.pr_number, job.head_sha[:12], n)
        except Exception:  # a record, never a reason to hold the analyses back
            log.warning("could not check which suggestions %s#%s applied", job.repo, job.pr_number, exc_info=True)

    def _head_file(self, gh: GitHub, job: PRJob | AnalyzeJob) -> Callable[[str], str | None]:
        """A file at the job's head from the contents API, never downloaded past the limit of a file
        analysed (analyzers/context.py `head_file_limit`): a larger one raises HeadFileTooLarge."""
        limit = head_file_limit(self.settings.tools())
        return lambda path: gh.file_text(job.repo, path, job.head_sha, limit=limit)

    def _recorder(self, job: AnalyzeJob, gh: GitHub) -> Callable[[list[dict[str, Any]]], int]:
        """Records what a reporter published on the job's pull request (bot/app/feedback.py), with
        the flagged lines read at the head it was posted on."""
        def record_items(items: list[dict[str, Any]]) -> int:
            return feedback.record(self.store, job.installation_id, job.repo, job.pr_number or 0, job.head_sha,
                                   [feedback.Item(**i) for i in items],
                                   self._head_file(gh, job), repository_id=job.repository_id)

        return record_items

    def fail_check_run(self, row: JobRow, why: str) -> None:
        """Complete the check run of a failed (or abandoned) analysis as neutral, saying why."""
        try:
            job = events.from_spec(row.spec)
            if isinstance(job, AnalyzeJob):
                self.checks.fail(self._gh(job), job, why)
        except Exception:
            log.exception("could not mark the check run of job %s as failed", row.id)

    def owns(self, comment: Mapping[str, Any]) -> bool:
        """Whether this App wrote `comment` (only then do its markers, thread and reactions count)."""
        return feedback.by_a_bot(comment) and app_identity(self.settings).wrote(comment)

    def llm_factory(self, model: str | None, installation_id: int | None = None, *,
                    payer: budget.Payer | None = None) -> Callable[[], LLMClient]:
        if payer is None and installation_id:
            payer = budget.Payer(installation_id)
        return budget.llm_factory(self.settings, self.store, model, payer)
