"""The pipeline behind the queue, idempotent per (check name, head SHA): wiring of typed jobs
(bot/app/events.py) to the check-run lifecycle (bot/core/checks.py), the analyses, publishing
(bot/app/publish.py), the LLM budgets (bot/core/budget.py) and the sweep (bot/app/sweep.py).

`PRJob`: the repository's configuration (drafts, which analyzers), older heads cancelled, then
one `AnalyzeJob` per enabled analyzer, recorded in the store and run right here, at once, on
the PR's files and review comments read once for all of them (no second trip through the
queue, no reading the same PR three times; a worker that dies midway leaves them to the sweep
like any other job).

`AnalyzeJob`: find or create the check run → in_progress → the PR's files (100 per page; no
`patch` → skipped with the reason) and review comments → ChangeSet → the analyzer (by name
from analyzers.registry: a new analyzer plugs in here unchanged) → check-run output and
annotations in batches of 50 → findings stored. The LLM client's cache is the store, keyed by
installation, so a push that leaves a hunk unchanged sends no LLM request for it and no tenant
is served another's answers; each job's LLM use is bounded by its budget (bot/core/budget.py).

Forced work (a re-run request, an edited review comment) is debounced: a burst makes one
analysis per head and analysis per RTCBOT_FORCE_DEBOUNCE_S (see bot/store/jobs.py `insert_job`).

Durability: the store is the truth, the queue only carries job ids. A running job beats a
heartbeat; the sweep (bot/app/sweep.py) recovers what a dead worker or a lost message left.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from huey import Huey

from analyzers import registry
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.llm import LLMClient
from analyzers.pipeline import run_one
from bot.app import events, feedback
from bot.app.events import AnalyzeJob, FeedbackJob, InstallationJob, Job, PRJob
from bot.app.publish import publish, record
from bot.app.queue import make_huey
from bot.app.sweep import Resender, Sweeper, why
from bot.core import budget, qualification
from bot.core.checks import CheckRuns
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import (
    Selection,
    build,
    changes_from_github,
    comments_from_github,
    head_files,
    select,
    unlisted_files_note,
)
from bot.core.logs import job_context
from bot.core.settings import ServiceSettings
from bot.github import GitHub, GitHubError, app_identity, installation_client
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.check_run import diff_lines

log = logging.getLogger(__name__)

GithubFactory = Callable[[int], GitHub]
Outcome = tuple[str, str, dict[str, int]]  # (status, result, LLM usage)


class JobError(RuntimeError):
    pass


@dataclass(frozen=True)
class Accepted:
    """What a new delivery made: the ids of the jobs sent for it (its new jobs, and any same
    work still waiting for a message the queue refused), and why nothing was made, if so."""

    jobs: list[int]
    note: str = ""
    asked: int = 0  # jobs the delivery asked for (some may have joined the same work queued)
    routed: bool = True  # False: routing failed; the sweep routes the recorded delivery later

    @property
    def nothing_to_do(self) -> bool:
        """Routed, and asked for no work (an event or action not handled, no installation)."""
        return self.routed and self.asked == 0


@dataclass
class PRInputs:
    """What every analysis of one head reads from GitHub, read once by the `pr` job."""

    config: LoadedConfig
    files: Future[list[dict[str, Any]]]
    comments: Future[list[ReviewComment]]


def check_titles() -> dict[str, str]:
    """Check titles → analyzer names, for every registered analyzer that imports."""
    out = {}
    for name in registry.ANALYZERS:
        try:
            out[registry.get(name).title] = name
        except Exception:  # an analyzer whose optional dependencies are missing
            continue
    return out


def freeze_start_up() -> None:
    """Move what start-up loaded (modules, the embedding model: ~500k objects that live as long
    as the process) out of the garbage collector's reach. Each full collection walked them all
    while holding the interpreter lock: every thread of every job stopped for ~350 ms, a few
    times an hour (bench/e2e_floor.py's App run saw it as one PR at 1.7× its floor)."""
    gc.freeze()


@contextmanager
def heartbeat(store: Store, job_id: int, every_s: float) -> Iterator[None]:
    """Beat the running job's heartbeat every `every_s` while the block runs."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every_s):
            try:
                store.jobs.heartbeat(job_id)
            except Exception:  # the database is away for a moment; the next beat retries
                log.warning("heartbeat of job %s failed", job_id, exc_info=True)

    threading.Thread(target=beat, name=f"heartbeat-{job_id}", daemon=True).start()
    try:
        yield
    finally:
        stop.set()


class Runtime:
    """Settings, store and queue of one process (the webhook service or a worker)."""

    def __init__(self, settings: ServiceSettings, *, store: Store | None = None, huey: Huey | None = None,
                 github: GithubFactory | None = None) -> None:
        self.settings = settings
        self.store = store or Store(settings.database())
        self.huey = huey or make_huey(settings)
        self._github = github or (lambda inst: installation_client(settings, inst))
        self.task = self.huey.task(name="rtcbot.run_job")(self.run_job)
        self.checks = CheckRuns(self.store)
        self.resender = Resender(self.store, self.enqueue)
        self.sweep = Sweeper(self.store, settings, self.route_delivery, self.send, self._fail_check_run)
        self._titles: dict[str, str] | None = None

    def warm_up(self) -> None:
        """Pay the one-off start-up costs before the first job: the embedding model and PMD's
        JVM (CRScore), and the HTTP client of the LLM endpoint with a first call to it (GET /models; a
        client and its first request cost ~50 ms of CPU). Failures only log: an analyzer that
        cannot start says why when it runs."""
        try:
            from analyzers.crscore.analyzer import warm_up as warm_crscore

            warm_crscore(self.settings.pmd_server)
        except Exception:
            log.warning("warm-up of CRScore failed; it starts on first use", exc_info=True)
        if self.settings.llm_base_url:  # the embedded model starts on first use, not here
            try:
                self.llm_factory(None)().check()
            except Exception as e:
                log.warning("the LLM endpoint did not answer at start (%s); jobs will try again", e)
        freeze_start_up()

    def llm_factory(self, model: str | None, installation_id: int | None = None) -> Callable[[], LLMClient]:
        return budget.llm_factory(self.settings, self.store, model, installation_id)

    # -- enqueueing -------------------------------------------------------------------------
    def enqueue(self, job_id: int) -> None:
        self.task(job_id)

    def send(self, job_ids: Sequence[int]) -> bool:
        """Enqueue stored jobs; whether all went. A message that cannot be sent (the queue is
        away) loses nothing: the job stays queued in the store, marked unsent, and this process
        tries again within seconds (Resender); the sweep and a later delivery of the same work
        send it too. One warning line, no traceback."""
        for n, job_id in enumerate(job_ids):
            try:
                self.enqueue(job_id)
            except Exception as e:
                rest = list(job_ids[n:])
                log.warning("could not send job(s) %s to the queue (%s); retrying in the background",
                            ", ".join(map(str, rest)), why(e))
                try:
                    self.store.jobs.expedite(rest)
                except Exception as e2:  # the sweep still sends them, after RTCBOT_REQUEUE_AFTER_S
                    log.warning("could not mark job(s) %s as unsent (%s)", ", ".join(map(str, rest)), why(e2))
                self.resender.wake()
                return False
        return True

    def route(self, event: str, payload: dict[str, Any]) -> events.Routed:
        return events.route(event, payload, comment_analyzers=self.settings.comment_analyzers,
                            titles=self.titles() if event == "check_run" else None)

    def accept(self, delivery_id: str, event: str, payload: dict[str, Any], body: bytes | str) -> Accepted | None:
        """A verified delivery: route it (pure), then record it with its jobs in one transaction
        and enqueue them; what it made, or None for a redelivery (nothing done). A routing
        failure still records the delivery, unrouted, for the sweep to route later. Work that
        is already queued is not made again, but when its message never went out (the queue
        refused it) this delivery sends it."""
        try:
            routed: events.Routed | None = self.route(event, payload)
        except Exception:
            log.exception("routing delivery %s failed; the sweep will retry", delivery_id)
            routed = None
        action = payload.get("action")
        ids = self.store.deliveries.accept(delivery_id, event, action if isinstance(action, str) else None, body,
                                           None if routed is None else [events.to_spec(j) for j in routed.jobs],
                                           (routed.note or None) if routed is not None else None,
                                           force_window_s=self.settings.force_debounce_s)
        if ids is None:
            return None
        if event == "pull_request_review_thread":
            try:
                self.thread(payload)
            except Exception:  # a record only: the delivery is kept either way
                log.warning("could not record review thread of delivery %s", delivery_id, exc_info=True)
        if routed is None:
            return Accepted([], "routing failed; it is retried", routed=False)
        if ids:
            self.send(ids)
        if len(ids) < len(routed.jobs):  # some merged into work already there
            ids = ids + self._resend_like([events.to_spec(j) for j in routed.jobs], skip=ids)
        note = routed.note or ("the same work is already queued or running, or was re-run within "
                               "RTCBOT_FORCE_DEBOUNCE_S" if routed.jobs and not ids else "")
        return Accepted(ids, note, asked=len(routed.jobs))

    def _resend_like(self, specs: list[dict[str, Any]], skip: Sequence[int] = ()) -> list[int]:
        """Send again the queued jobs (but `skip`) doing the work of `specs` whose message never
        went out; their ids."""
        try:
            unsent = [i for i in self.store.jobs.unsent_like(specs) if i not in skip]
        except Exception as e:
            log.warning("could not look for unsent jobs (%s)", why(e))
            return []
        if unsent and self.send(unsent):
            try:
                self.store.jobs.mark_sent(unsent)
            except Exception as e:  # the sweep sends them once more: harmless
                log.warning("could not mark job(s) %s as sent (%s)", unsent, why(e))
        return unsent

    def route_delivery(self, delivery_id: str, event: str, payload: dict[str, Any]) -> list[int]:
        """Route a delivery that was recorded but not routed (the sweep); [] when another
        process routed it meanwhile."""
        routed = self.route(event, payload)
        ids = self.store.deliveries.route(delivery_id, [events.to_spec(j) for j in routed.jobs], routed.note or None,
                                          force_window_s=self.settings.force_debounce_s)
        if ids:
            self.send(ids)
        return ids or []

    def titles(self) -> dict[str, str]:
        if self._titles is None:
            self._titles = check_titles()
        return self._titles

    # -- running ----------------------------------------------------------------------------
    def run_job(self, job_id: int, inputs: PRInputs | None = None) -> str:
        """Run one job if it is still queued; its final status. `inputs`: an analysis's reads
        already made by the `pr` job that runs it."""
        row = self.store.jobs.start(job_id)
        if row is None:
            return self.store.jobs.status(job_id) or "missing"
        # every line logged while it runs names the job: repo#PR, head, analyzer, id, seconds in
        with job_context(job_id, repo=row.repo, pr=row.pr_number, head=row.head_sha, analyzer=row.analyzer):
            log.info("%s job started (attempt %s)", row.kind, row.attempts)
            status = self._run_started(row, inputs)
            log.info("%s job ended: %s", row.kind, status)
            return status

    def _run_started(self, row: JobRow, inputs: PRInputs | None) -> str:
        """run_job's work, for a job this attempt has started."""
        job_id = row.id
        t0 = time.monotonic()
        usage: dict[str, int] = {}
        with heartbeat(self.store, job_id, self.settings.heartbeat_s):
            try:
                status, result, usage = self._dispatch(row, events.from_spec(row.spec), inputs)
            except Exception as e:
                log.exception("job %s failed", job_id)
                status, result = "failed", f"{type(e).__name__}: {e}"
                self._fail_check_run(row, f"rtcbot could not finish this analysis: {e}")
        if not self.store.jobs.finish(job_id, status, result, duration_s=time.monotonic() - t0, usage=usage,
                                      attempt=row.attempts):
            log.warning("job %s attempt %s ended after the sweep gave it to another attempt; "
                        "its status is that attempt's", job_id, row.attempts)
            return self.store.jobs.status(job_id) or "missing"
        return status

    def _dispatch(self, row: JobRow, job: Job, inputs: PRInputs | None) -> Outcome:
        if isinstance(job, InstallationJob):
            if job.installation_id:
                self.store.installations.save(job.installation_id, job.account, job.active)
            return "done", f"installation {job.action}", {}
        if isinstance(job, FeedbackJob):
            return self._closed(job)
        if isinstance(job, PRJob):
            return (*self._fan_out(row, job), {})
        return self._analyze(row, job, inputs)

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
        comments = io.submit(lambda: comments_from_github(gh.review_comments(job.repo, job.pr_number)))
        return PRInputs(self._config(gh, job), files, comments)

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

    def _analyze(self, row: JobRow, job: AnalyzeJob, inputs: PRInputs | None) -> Outcome:
        analyzer = registry.get(job.analyzer)
        check = events.check_name(analyzer.title)
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
            factory, qual_notes = self._qualified_llm(job, cfg, sel.model)
            files = inputs.files.result()
            changes = changes_from_github(files, cfg)
            unlisted = unlisted_files_note(len(files), lambda: gh.changed_files(job.repo, job.pr_number))
            ctx = build(cfg, dataclasses.replace(sel, names=[job.analyzer]), tools=self.settings.tools(),
                        llm_factory=factory,
                        comments=inputs.comments.result,  # only for an analyzer that reads them
                        file_loader=head_files(None, lambda path: gh.file_text(job.repo, path, job.head_sha)))
            report = run_one(job.analyzer, changes, ctx)
            budget.note_cut(ctx, report)
            cr_id, fresh = started.result()
        try:  # the check run is published first; the store's bookkeeping follows
            if self.store.jobs.status(row.id) == "cancelled":
                return "cancelled", "superseded while running", report.usage
            out = publish(gh, job, cr_id, report, fail_on=cfg.config.gate(),
                          notes=[*sel.notes, *qual_notes, *([unlisted] if unlisted else [])],
                          extra=self.settings.reporters, diff=diff_lines(changes),
                          suggestions=cfg.config.suggestions,
                          on_published=None if cfg.config.feedback == "off" else self._recorder(job, gh), fresh=fresh)
        finally:
            self._settle(row, job, ctx)
        record(self.store, job, check, cr_id, out, report)
        return "done", json.dumps({"check_run": cr_id, "findings": len(report.findings),
                                   "error": report.error}), dict(report.usage)

    def _settle(self, row: JobRow, job: AnalyzeJob, ctx: AnalysisContext) -> None:
        """The analysis's usage counted against its installation's budget, and its LLM answers
        written to the cache, before its job ends."""
        budget.charge(self.store, job.installation_id, ctx)
        try:
            self.store.cache.flush()
        except Exception:
            log.warning("could not write the LLM answers of job %s to the cache", row.id, exc_info=True)

    def _qualified_llm(self, job: AnalyzeJob, cfg: LoadedConfig,
                       model: str | None) -> tuple[Callable[[], LLMClient], list[str]]:
        """The analysis's LLM factory and its note: under `require_qualified: true` a model that
        the App's database does not record as qualified for the repository is refused
        (bot/core/qualification.py), and the check run says so."""
        factory = self.llm_factory(model, job.installation_id)
        if not cfg.config.require_qualified:
            return factory, []
        name = qualification.model_name(self.settings.llm_settings(model))
        why = qualification.refusal_from_store(self.store, job.repo, name)
        return (factory, []) if why is None else (qualification.refusing_factory(why), [why])

    def _closed(self, job: FeedbackJob) -> Outcome:
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
            n = feedback.check_applied(self.store, job.repo, job.pr_number,
                                       lambda path: gh.file_text(job.repo, path, job.head_sha))
            if n:
                log.info("%s#%s at %s: %d suggestion(s) applied", job.repo, job.pr_number, job.head_sha[:12], n)
        except Exception:  # a record, never a reason to hold the analyses back
            log.warning("could not check which suggestions %s#%s applied", job.repo, job.pr_number, exc_info=True)

    def thread(self, payload: dict[str, Any]) -> int:
        """A review thread resolved or unresolved: the suggestions in it follow (no GitHub call)."""
        thread = payload.get("thread") or {}
        keys = feedback.keys_in(c.get("body") for c in thread.get("comments") or []
                                if isinstance(c, dict) and self.owns(c))
        pr = payload.get("pull_request") or {}
        repo = (payload.get("repository") or {}).get("full_name")
        if not keys or not isinstance(pr.get("number"), int) or not isinstance(repo, str):
            return 0
        return self.store.published.mark_resolved(repo, pr["number"], keys, payload.get("action") == "resolved")

    def owns(self, comment: Mapping[str, Any]) -> bool:
        """Whether this App wrote `comment` (only then do its markers, thread and reactions count)."""
        return feedback.by_a_bot(comment) and app_identity(self.settings).wrote(comment)

    def _recorder(self, job: AnalyzeJob, gh: GitHub) -> Callable[[list[dict[str, Any]]], int]:
        """Records what a reporter published on the job's pull request (bot/app/feedback.py), with
        the flagged lines read at the head it was posted on."""
        def record_items(items: list[dict[str, Any]]) -> int:
            return feedback.record(self.store, job.installation_id, job.repo, job.pr_number or 0, job.head_sha,
                                   [feedback.Item(**i) for i in items],
                                   lambda path: gh.file_text(job.repo, path, job.head_sha))

        return record_items

    def _fail_check_run(self, row: JobRow, why: str) -> None:
        """Complete the check run of a failed (or abandoned) analysis as neutral, saying why."""
        try:
            job = events.from_spec(row.spec)
            if isinstance(job, AnalyzeJob):
                self.checks.fail(self._gh(job), job, why)
        except Exception:
            log.exception("could not mark the check run of job %s as failed", row.id)
