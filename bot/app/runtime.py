"""The App's runtime: one process's settings, store and queue, and the parts of a job's life
built once, each from parts already built (nothing is set on a part afterwards):

    outbox      wake-ups to the queue, one per job (bot/app/outbox.py, bot/app/queue.py),
                with the resender for what the queue refused (bot/app/sweep.py)
    claims      the next job to run, fair across installations (bot/store/claims.py)
    analysis    the `analyze` kind (bot/app/analysis.py), over the PR reader (bot/app/pr_inputs.py)
    worker      a job started, beaten, ended (bot/app/worker.py); a raised one fails its check run
    intake      deliveries → recorded jobs → the outbox (bot/app/intake.py)
    pipeline    job kind → handler (bot/app/pipeline.py): the `pr` kind runs its analyses
                through the worker (bot/app/fan_out.py), commands send through the outbox
    sweep       what a dead worker or a refused message left (bot/app/sweep.py)

`run_next` claims the next job and runs it in the worker with the pipeline: what each of
`rtcbot worker`'s threads does (bot/app/consumer.py).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from bot.app import events, queue
from bot.app.analysis import Analysis
from bot.app.closed import Closed
from bot.app.comment_commands import CommentCommands
from bot.app.fan_out import FanOut
from bot.app.identity import OwnComments
from bot.app.intake import Accepted, Intake
from bot.app.outbox import Outbox
from bot.app.pipeline import Pipeline
from bot.app.pr_inputs import GithubFactory, PRReader
from bot.app.settings import ServiceSettings
from bot.app.sweep import Resender, Sweeper, why
from bot.app.tenant_jobs import Installations, Repositories
from bot.app.worker import Worker
from bot.core.checks import CheckRuns
from bot.github import installation_client
from bot.store.claims import Claims, Fairness
from bot.store.store import Store

log = logging.getLogger(__name__)


class Runtime:
    """Settings, store and queue of one process (the webhook service or a worker), and its parts."""

    def __init__(self, settings: ServiceSettings, *, store: Store | None = None, jobs_queue: queue.Queue | None = None,
                 github: GithubFactory | None = None) -> None:
        self.settings = settings
        self.store = store or Store(settings.database())
        self.queue = jobs_queue or queue.make_queue(settings)
        gh = github or functools.partial(installation_client, settings)
        self.resender = Resender(self.store, self.queue.send)
        self.outbox = Outbox(self.store, self.queue.send, self.resender)
        self.claims = Claims(self.store.db, Fairness(settings.installation_max_jobs, settings.installation_weights))
        self.owns = OwnComments(settings)
        checks = CheckRuns(self.store.checks)
        reader = PRReader(settings, self.owns)
        analysis = Analysis(settings, self.store, gh, checks, reader)
        self.worker = Worker(settings, self.store, analysis.fail_check_run)
        self.intake = Intake(settings, self.store, self.outbox.send, self.owns)
        commands = CommentCommands(settings, self.store, gh, self.outbox.send, self.intake.slug, self.owns)
        self.pipeline = Pipeline(self.store, {
            "pr": FanOut(settings, self.store, gh, checks, reader, self.worker, analysis),
            "analyze": analysis,
            "feedback": Closed(self.store, gh, self.owns),
            "command": commands,
            "proposal": commands,
            "installation": Installations(self.store),
            "repository": Repositories(self.store),
        })
        self.sweep = Sweeper(self.store, settings, self.intake.route_delivery, self.outbox.send,
                             analysis.fail_check_run)

    def warm_up(self) -> None:
        self.worker.warm_up()

    def run_job(self, job_id: int) -> str:
        """Run stored job `job_id` here, if it is still queued."""
        return self.worker.run(job_id, self.pipeline.dispatch)

    def run_next(self) -> str | None:
        """Claim the next job (fair across installations) and run it here; its final status,
        or None when no job may run now. With a cap per installation, a job's end sends a
        wake-up: a job the cap held back (its message taken by a worker that could not claim it)
        is claimed by an idle worker at once, not at its next poll."""
        row = self.claims.next()
        if row is None:
            return None
        try:
            return self.worker.run_started(row, self.pipeline.dispatch)
        finally:
            if self.claims.fairness.cap:
                self._wake(row.id)

    def _wake(self, job_id: int) -> None:
        try:
            self.queue.send(job_id)
        except Exception as e:  # only a wake-up: the idle workers' poll claims it anyway
            log.debug("could not send a wake-up after job %s (%s)", job_id, why(e))

    def accept(self, delivery_id: str, event: str, payload: dict[str, Any], body: bytes | str) -> Accepted | None:
        return self.intake.accept(delivery_id, event, payload, body)

    def route(self, event: str, payload: dict[str, Any]) -> events.Routed:
        return self.intake.route(event, payload)

    def thread(self, payload: dict[str, Any]) -> int:
        return self.intake.thread(payload)

