"""The pipeline behind the queue, idempotent per (check name, head SHA).

`pr` job: the repository's configuration (drafts, which analyzers), older heads cancelled, then
one `analyze` job per enabled analyzer, recorded in the store and run right here, at once, on
the PR's files and review comments read once for all of them (no second trip through the
queue, no reading the same PR three times; a worker that dies midway leaves them to the sweep
like any other job).

`analyze` job: find or create the check run → in_progress → the PR's files (100 per page; no
`patch` → skipped with the reason) and review comments → ChangeSet → the analyzer (by name
from analyzers.registry: a new analyzer plugs in here unchanged) → check-run output and
annotations in batches of 50 → findings stored. The LLM client's cache is the store, so a
push that leaves a hunk unchanged sends no LLM request for it.

Durability: the store is the truth, the queue only carries job ids. A running job beats a
heartbeat; the sweep re-enqueues jobs whose worker died (or completes their check run as
neutral with the reason after `max_attempts`), enqueues again jobs whose message was lost,
and routes deliveries that were recorded but never routed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from huey import Huey

from analyzers import registry
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.diff import DEFAULT_IGNORES, parse_github_files
from analyzers.llm import LLMClient
from analyzers.pipeline import run_one
from analyzers.report import AnalyzerReport
from bot import checks, events
from bot.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.github import GitHubClient, GitHubError
from bot.queue import make_huey
from bot.settings import ServiceSettings
from bot.store import JobRow, Store, StoreCache

log = logging.getLogger(__name__)

GithubFactory = Callable[[int], GitHubClient]


class JobError(RuntimeError):
    pass


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


class Runtime:
    """Settings, store and queue of one process (the webhook service or a worker)."""

    def __init__(self, settings: ServiceSettings, *, store: Store | None = None, huey: Huey | None = None,
                 github: GithubFactory | None = None) -> None:
        self.settings = settings
        self.store = store or Store(settings.database())
        self.huey = huey or make_huey(settings)
        self._github = github or (lambda inst: GitHubClient(settings, inst))
        self.task = self.huey.task(name="rtcbot.run_job")(self._task_entry)
        self._titles: dict[str, str] | None = None

    def warm_up(self) -> None:
        """Pay the one-off start-up costs before the first job: the embedding model and PMD's
        JVM (CRScore), and the HTTP client of the LLM endpoint with a first call to it (GET /models; a
        client and its first request cost ~50 ms of CPU). Failures only log: an analyzer that
        cannot start says why when it runs."""
        try:
            from analyzers.crscore.analyzer import warm_up as warm_crscore

            warm_crscore()
        except Exception:
            log.warning("warm-up of CRScore failed; it starts on first use", exc_info=True)
        if self.settings.llm_base_url:  # the embedded model starts on first use, not here
            try:
                self.llm_factory(None)().check()
            except Exception as e:
                log.warning("the LLM endpoint did not answer at start (%s); jobs will try again", e)

    # -- enqueueing -------------------------------------------------------------------------
    def _task_entry(self, job_id: int) -> None:
        self.run_job(job_id)

    def enqueue(self, job_id: int) -> None:
        self.task(job_id)

    def send(self, job_ids: list[int]) -> None:
        """Enqueue stored jobs. A message that cannot be sent (the queue is away) loses
        nothing: the job stays queued in the store and the next sweep sends it."""
        for n, job_id in enumerate(job_ids):
            try:
                self.enqueue(job_id)
            except Exception:
                log.exception("could not enqueue job %s; the sweep will send it", job_id)
                try:
                    self.store.expedite(job_ids[n:])
                except Exception:
                    log.warning("could not mark jobs %s for the sweep", job_ids[n:], exc_info=True)
                return

    def route(self, event: str, payload: dict[str, Any]) -> events.Routed:
        return events.route(event, payload, comment_analyzers=self.settings.comment_analyzers,
                            titles=self.titles() if event == "check_run" else None)

    def accept(self, delivery_id: str, event: str, payload: dict[str, Any], body: bytes | str) -> list[int] | None:
        """A verified delivery: route it (pure), then record it with its jobs in one transaction
        and enqueue them; the new jobs' ids, or None for a redelivery (nothing done). A routing
        failure still records the delivery, unrouted, for the sweep to route later."""
        try:
            routed: events.Routed | None = self.route(event, payload)
        except Exception:
            log.exception("routing delivery %s failed; the sweep will retry", delivery_id)
            routed = None
        action = payload.get("action")
        ids = self.store.accept_delivery(delivery_id, event, action if isinstance(action, str) else None, body,
                                         None if routed is None else routed.jobs,
                                         (routed.note or None) if routed is not None else None)
        if ids:
            self.send(ids)
        return ids

    def route_delivery(self, delivery_id: str, event: str, payload: dict[str, Any]) -> list[int]:
        """Route a delivery that was recorded but not routed (the sweep); [] when another
        process routed it meanwhile."""
        routed = self.route(event, payload)
        ids = self.store.route_recorded(delivery_id, routed.jobs, routed.note or None)
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
        row = self.store.start_job(job_id)
        if row is None:
            return self.store.job_status(job_id) or "missing"
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.settings.heartbeat_s):
                try:
                    self.store.heartbeat(job_id)
                except Exception:  # the database is away for a moment; the next beat retries
                    log.warning("heartbeat of job %s failed", job_id, exc_info=True)

        beater = threading.Thread(target=beat, name=f"heartbeat-{job_id}", daemon=True)
        beater.start()
        t0 = time.monotonic()
        usage: dict[str, int] = {}
        try:
            status, result, usage = self._dispatch(row, inputs)
        except Exception as e:
            log.exception("job %s failed", job_id)
            status, result = "failed", f"{type(e).__name__}: {e}"
            self._fail_check_run(row, f"rtcbot could not finish this analysis: {e}")
        finally:
            stop.set()
        self.store.finish_job(job_id, status, result, duration_s=time.monotonic() - t0, usage=usage)
        return status

    def _dispatch(self, row: JobRow, inputs: PRInputs | None = None) -> tuple[str, str, dict[str, int]]:
        spec = row.spec
        if spec["kind"] == "installation":
            if spec.get("installation_id"):
                self.store.save_installation(int(spec["installation_id"]), spec.get("account", ""),
                                             bool(spec.get("active", True)))
            return "done", f"installation {spec.get('action')}", {}
        if spec["kind"] == "pr":
            return (*self._fan_out(row), {})
        if spec["kind"] == "analyze":
            return self._analyze(row, inputs)
        raise JobError(f"unknown job kind {spec['kind']!r}")

    def _gh(self, spec: dict[str, Any]) -> GitHubClient:
        if not spec.get("installation_id"):
            raise JobError("the delivery names no installation")
        return self._github(int(spec["installation_id"]))

    def _config(self, gh: GitHubClient, spec: dict[str, Any]) -> LoadedConfig:
        try:
            text = gh.file_text(spec["repo"], CONFIG_PATH, spec.get("default_branch") or "main")
        except GitHubError as e:
            return LoadedConfig(error=f"could not read {CONFIG_PATH}: {e}")
        return parse_config(text)

    def _read_pr(self, io: ThreadPoolExecutor, gh: GitHubClient, spec: dict[str, Any]) -> PRInputs:
        """The PR's files and review comments, loading on `io` while the configuration is read."""
        files = io.submit(gh.pr_files, spec["repo"], spec["pr_number"])
        comments = io.submit(self._comments, gh, spec["repo"], spec["pr_number"])
        return PRInputs(self._config(gh, spec), files, comments)

    def _fan_out(self, row: JobRow) -> tuple[str, str]:
        spec = row.spec
        gh = self._gh(spec)
        repo, pr = spec["repo"], spec["pr_number"]
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"job-{row.id}-github") as io:
            inputs = self._read_pr(io, gh, spec)
            cfg = inputs.config
            if spec.get("draft") and not cfg.drafts(self.settings.process_drafts):
                return "skipped", "draft pull request (enable with `drafts: true`)"
            newer = self.store.newer_head(repo, pr, spec["head_sha"], row.id)
            if newer is not None:
                return "cancelled", f"superseded by {newer}"
            for old in self.store.cancel_older(repo, pr, spec["head_sha"], row.id):
                self._cancel_check_run(gh, old, spec["head_sha"])
            made: list[tuple[str, int]] = []
            for name in cfg.enabled(self.settings.analyzers):
                child = {k: v for k, v in spec.items() if k not in ("kind", "action")}
                child.update(kind="analyze", analyzer=name, root=row.id, reason=f"pull_request.{spec.get('action')}")
                job_id = self.store.add_job(child, row.delivery_id)
                if job_id is not None:
                    made.append((name, job_id))
            with ThreadPoolExecutor(max_workers=max(1, len(made)), thread_name_prefix=f"job-{row.id}") as ex:
                ran = list(ex.map(lambda m: self.run_job(m[1], inputs), made))
        return "done", "analyses: " + (", ".join(f"{name} {status}" for (name, _), status in zip(made, ran, strict=True))
                                       or "none new")

    def _cancel_check_run(self, gh: GitHubClient, job: JobRow, newer: str) -> None:
        if job.kind != "analyze" or not job.analyzer or not job.head_sha:
            return
        try:
            name = events.check_name(registry.get(job.analyzer).title)
        except Exception:
            return
        cr = self.store.check_run(job.repo, name, job.head_sha)
        if cr is None or cr.github_id is None or cr.status == "completed":
            return
        gh.update_check_run(job.repo, cr.github_id, conclusion="cancelled", output={
            "title": "Superseded by a newer push", "summary": f"A newer commit ({newer[:12]}) replaced this one."})
        self.store.save_check_run(job.repo, name, job.head_sha, status="completed", conclusion="cancelled")

    # -- one analysis -----------------------------------------------------------------------
    def _existing_check_run(self, gh: GitHubClient, spec: dict[str, Any], name: str) -> tuple[int | None, bool]:
        """(the check run to use, None for a new one; whether the work is already done)."""
        repo, sha, force = spec["repo"], spec["head_sha"], bool(spec.get("force"))
        row = self.store.check_run(repo, name, sha)
        if row is not None and row.github_id is not None:
            if row.status != "completed":
                return row.github_id, False
            if not force:
                return row.github_id, True
        elif row is None:
            found = gh.find_check_run(repo, sha, name)
            if found is not None:
                done = found.get("status") == "completed"
                self.store.save_check_run(repo, name, sha, github_id=int(found["id"]), status=found.get("status"),
                                          conclusion=found.get("conclusion"), pr_number=spec.get("pr_number"))
                if not done or not force:
                    return int(found["id"]), done
        return None, False

    def _create_check_run(self, gh: GitHubClient, spec: dict[str, Any], name: str) -> int:
        repo, sha = spec["repo"], spec["head_sha"]
        ext = events.external_id(spec.get("pr_number"), spec["analyzer"])
        created = gh.create_check_run(repo, name, sha, external_id=ext, status="in_progress")
        self.store.save_check_run(repo, name, sha, github_id=int(created["id"]), status="in_progress",
                                  conclusion=None, pr_number=spec.get("pr_number"))
        return int(created["id"])

    def _start_check_run(self, gh: GitHubClient, spec: dict[str, Any], name: str, cr_id: int | None) -> int:
        """The check run (created when `cr_id` is None), marked in progress; its id."""
        repo, sha, pr = spec["repo"], spec["head_sha"], spec.get("pr_number")
        if cr_id is None:  # created in progress, with its external_id: nothing to update
            return self._create_check_run(gh, spec, name)
        gh.update_check_run(repo, cr_id, status="in_progress", external_id=events.external_id(pr, spec["analyzer"]))
        self.store.save_check_run(repo, name, sha, github_id=cr_id, status="in_progress", pr_number=pr)
        return cr_id

    def _comments(self, gh: GitHubClient, repo: str, pr: int) -> list[ReviewComment]:
        out = []
        for c in gh.review_comments(repo, pr):
            line = c.get("line")
            if line is None or not c.get("path"):
                continue  # outdated: the line is no longer in the diff
            out.append(ReviewComment(path=str(c["path"]), line=int(line), body=str(c.get("body") or ""),
                                     author=str((c.get("user") or {}).get("login") or ""), id=c.get("id")))
        return out

    def llm_factory(self, model: str | None) -> Callable[[], LLMClient]:
        def make() -> LLMClient:
            from analyzers.local_llm import client_from_settings

            client = client_from_settings(self.settings.llm_settings(model))
            client.cache = StoreCache(self.store)
            return client

        return make

    def _analyze(self, row: JobRow, inputs: PRInputs | None = None) -> tuple[str, str, dict[str, int]]:
        spec = row.spec
        repo, sha, pr, name = spec["repo"], spec["head_sha"], spec.get("pr_number"), spec["analyzer"]
        if not sha or not pr:
            raise JobError("no head SHA or pull request number")
        analyzer = registry.get(name)
        check = events.check_name(analyzer.title)
        gh = self._gh(spec)
        # GitHub calls overlap: the check run already there and (unless the `pr` job read them)
        # the PR's files and review comments load while the config is read; the check run is
        # created in progress while the analysis runs
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"job-{row.id}-github") as io:
            found = io.submit(self._existing_check_run, gh, spec, check)
            inputs = inputs or self._read_pr(io, gh, spec)
            files, comments, cfg = inputs.files, inputs.comments, inputs.config
            explicit = str(spec.get("reason", "")).startswith("check_run")
            if not explicit and name not in cfg.enabled(self.settings.analyzers + self.settings.comment_analyzers):
                return "skipped", f"{name} is turned off in {CONFIG_PATH}", {}
            existing, done = found.result()
            if done:
                return "skipped", f"{check} for {sha[:12]} is already complete", {}
            started = io.submit(self._start_check_run, gh, spec, check, existing)
            changes = parse_github_files(files.result(), ignore=(*DEFAULT_IGNORES, *cfg.config.ignore))
            model, model_note = cfg.model(self.settings.allowed_models)
            ctx = AnalysisContext(
                llm_factory=self.llm_factory(model),
                comments=comments.result(),
                file_loader=lambda path: gh.file_text(repo, path, sha),
                options=cfg.config.options,
            )
            report = run_one(name, changes, ctx)
            try:
                self.store.cache_flush()  # this analysis's LLM answers are stored before it ends
            except Exception:
                log.warning("could not write the LLM answers of job %s to the cache", row.id, exc_info=True)
            cr_id = started.result()
        if self.store.job_status(row.id) == "cancelled":
            return "cancelled", "superseded while running", report.usage
        notes = [n for n in (cfg.error and f"{cfg.error}; the defaults apply.", model_note) if n]
        self.publish(gh, repo, cr_id, report, thresholds=cfg.config.thresholds.get(name), notes=notes)
        cr = self.store.save_check_run(repo, check, sha, github_id=cr_id, status="completed",
                                       conclusion=checks.conclusion_of(report, cfg.config.thresholds.get(name))[0],
                                       scores=dict(report.scores), pr_number=pr,
                                       annotations=sum(1 for f in report.findings if checks.annotation_of(f)))
        self.store.save_findings(cr.id, report.findings)
        return "done", json.dumps({"check_run": cr_id, "findings": len(report.findings),
                                   "error": report.error}), dict(report.usage)

    def publish(self, gh: GitHubClient, repo: str, cr_id: int, report: AnalyzerReport, *,
                thresholds: dict[str, float] | None = None, notes: list[str] | None = None) -> checks.CheckOutput:
        out = checks.render(report, thresholds=thresholds, notes=notes or [])
        parts = out.batches() or [[]]
        for i, batch in enumerate(parts):
            last = i == len(parts) - 1
            fields: dict[str, Any] = {"output": out.output(batch)}
            if last:
                fields.update(conclusion=out.conclusion, actions=[checks.rerun_action()])
            gh.update_check_run(repo, cr_id, **fields)
        return out

    def _fail_check_run(self, row: JobRow, why: str) -> None:
        spec = row.spec
        if spec.get("kind") != "analyze":
            return
        try:
            name = events.check_name(registry.get(spec["analyzer"]).title)
            cr = self.store.check_run(spec["repo"], name, spec["head_sha"])
            if cr is None or cr.github_id is None or cr.status == "completed":
                return
            gh = self._gh(spec)
            gh.update_check_run(spec["repo"], cr.github_id, conclusion="neutral", output={
                "title": "rtcbot could not finish", "summary": checks.cut(why)})
            self.store.save_check_run(spec["repo"], name, spec["head_sha"], status="completed", conclusion="neutral")
        except Exception:
            log.exception("could not mark the check run of job %s as failed", row.id)

    # -- recovery ---------------------------------------------------------------------------
    def sweep(self) -> dict[str, int]:
        """Recover work a dead worker or a lost message left behind; counts of what it did."""
        s = self.settings
        counts = {"deliveries": 0, "requeued": 0, "abandoned": 0, "resent": 0}
        for d in self.store.unrouted_deliveries(older_than_s=min(30.0, s.stale_after_s)):
            try:
                self.route_delivery(d.id, d.event, json.loads(d.payload))
                counts["deliveries"] += 1
            except Exception:
                log.exception("could not route delivery %s", d.id)
        for job in self.store.stale_running(s.stale_after_s):
            if job.attempts >= s.max_attempts:
                self.store.finish_job(job.id, "failed", f"abandoned after {job.attempts} attempts")
                self._fail_check_run(job, f"The worker running this analysis stopped {job.attempts} times "
                                          "(killed or out of memory); rtcbot gave up. Re-run it to try again.")
                counts["abandoned"] += 1
            elif self.store.requeue(job.id, expect="running"):
                self.enqueue(job.id)
                counts["requeued"] += 1
        for job in self.store.stale_queued(s.requeue_after_s):
            if self.store.requeue(job.id, expect="queued"):  # refreshes updated_at
                self.enqueue(job.id)
                counts["resent"] += 1
        return counts
