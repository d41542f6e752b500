"""The App's runtime: one process's settings, store and queue, and the three parts of a job's
life wired together — intake (bot/app/intake.py: deliveries → recorded jobs → the queue), the
worker (bot/app/worker.py: a job started, beaten, ended) and the pipeline
(bot/app/pipeline.py: what each job does) — with the sweep and the resender (bot/app/sweep.py)
that recover what a dead worker or a refused message left.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from huey import Huey

from analyzers.llm.client import LLMClient
from bot.app import events
from bot.app.comment_commands import CommentCommands
from bot.app.intake import Accepted, Intake
from bot.app.pipeline import GithubFactory, Pipeline, PRInputs
from bot.app.queue import make_huey
from bot.app.settings import ServiceSettings
from bot.app.sweep import Resender, Sweeper, why
from bot.app.worker import Worker, freeze_start_up
from bot.core.checks import CheckRuns
from bot.github import installation_client
from bot.store.store import Store

__all__ = ["Accepted", "Runtime", "freeze_start_up"]

log = logging.getLogger(__name__)


class Runtime:
    """Settings, store and queue of one process (the webhook service or a worker)."""

    def __init__(self, settings: ServiceSettings, *, store: Store | None = None, huey: Huey | None = None,
                 github: GithubFactory | None = None) -> None:
        self.settings = settings
        self.store = store or Store(settings.database())
        self.huey = huey or make_huey(settings)
        self.checks = CheckRuns(self.store.checks)
        factory = github or (lambda inst: installation_client(settings, inst))
        self.pipeline = Pipeline(settings, self.store, factory,
                                 self.checks, lambda job_id, inputs: self.worker.run_job(job_id, inputs))
        self.worker = Worker(settings, self.store, self.pipeline)
        self.intake = Intake(settings, self.store, self.send, self.pipeline.owns)
        self.pipeline.commands = CommentCommands(settings, self.store, factory, self.send,
                                                 self.intake.slug, self.pipeline.owns)
        self.task = self.huey.task(name="rtcbot.run_job")(self.run_job)
        self.resender = Resender(self.store, self.enqueue)
        self.sweep = Sweeper(self.store, settings, self.intake.route_delivery, self.send,
                             self.pipeline.fail_check_run)

    def warm_up(self) -> None:
        self.worker.warm_up()

    def llm_factory(self, model: str | None, installation_id: int | None = None) -> Callable[[], LLMClient]:
        return self.pipeline.llm_factory(model, installation_id)

    def run_job(self, job_id: int, inputs: PRInputs | None = None) -> str:
        return self.worker.run_job(job_id, inputs)

    def accept(self, delivery_id: str, event: str, payload: dict[str, Any], body: bytes | str) -> Accepted | None:
        return self.intake.accept(delivery_id, event, payload, body)

    def route(self, event: str, payload: dict[str, Any]) -> events.Routed:
        return self.intake.route(event, payload)

    def thread(self, payload: dict[str, Any]) -> int:
        return self.intake.thread(payload)

    def owns(self, comment: Mapping[str, Any]) -> bool:
        return self.pipeline.owns(comment)

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
