"""`rtcbot worker`: run the queued jobs (bot/app/consumer.py) and the recovery sweep."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

import click

from bot.app.hardening import make_non_dumpable
from bot.app.service_checks import service_settings, start_problem
from bot.core.settings import SettingsError

if TYPE_CHECKING:
    from bot.app.consumer import Consumer
    from bot.app.runtime import Runtime
    from bot.app.worker import Presence

log = logging.getLogger("rtcbot.worker")


def consumer(runtime: Runtime, workers: int) -> Consumer:
    """The consumer as `rtcbot worker` runs it: `workers` threads claiming jobs from the store,
    woken by the queue (a Redis queue blocks until a message arrives; a SQLite queue is read
    every 10 ms, backing off to 50 ms when idle), a queue outage said in two lines."""
    from bot.app.consumer import Consumer
    from bot.app.outage import Outage
    from bot.app.queue import place

    return Consumer(runtime.queue, runtime.run_next, Outage(place(runtime.settings)), runtime.worker.database,
                    workers)


def _sweeper(runtime: object, interval: float, stop: threading.Event) -> None:
    from bot.app.runtime import Runtime
    from bot.store.db import database_away

    assert isinstance(runtime, Runtime)
    while True:
        try:
            counts = runtime.sweep()
            if any(counts.values()):
                log.warning("sweep: %s", counts)
        except Exception as e:
            if database_away(e):
                runtime.worker.database.failed(e)  # its one line, once an outage
            else:
                log.exception("sweep failed")
        else:
            runtime.worker.database.ok()
        if stop.wait(interval):
            return


def _warm_up(runtime: Runtime, presence: Presence, t0: float) -> None:
    """The one-off start-up costs, then the one "ready" line and the heartbeat row marked ready."""
    runtime.warm_up()
    presence.mark_ready()
    log.info("rtcbot: worker ready: warm-up done in %.1f s", time.monotonic() - t0)


@click.command("worker")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Jobs run at once (threads). Default: RTCBOT_WORKERS or 2.")
def command(workers: int | None) -> None:
    """Run analyses from the queue (SQLite by default, Redis with REDIS_URL) and publish check runs.

    A periodic sweep re-enqueues jobs whose worker died and routes deliveries that were
    recorded but never enqueued; see docs/github-app.md."""
    make_non_dumpable()  # a same-user process cannot read our secrets from /proc
    from bot.shell.exits import settings_exit

    try:  # every setting checked (the private key parsed) before anything starts: exit 2
        settings = service_settings(app=True)
    except SettingsError as e:
        settings_exit(e)
    from bot.app.runtime import Runtime

    # logging: configured once by the command line (bot/core/logs.py), at info for the worker
    try:
        runtime = Runtime(settings)
    except Exception as e:  # one line; a database error names DATABASE_URL (bot/store/settings.py)
        raise click.ClickException(start_problem(e, settings)) from None
    from bot.app.queue import QueueUnavailable, check

    try:  # refuse to start on a queue that does not answer, rather than log its errors in a loop
        check(runtime.queue, settings)
    except QueueUnavailable as e:
        runtime.store.close()
        raise click.ClickException(f"cannot start: {e}") from None
    _run(runtime, workers or settings.workers)


def _run(runtime: Runtime, workers: int) -> None:
    """The worker's threads: warm-up, heartbeat, sweep, and the consumer's."""
    from bot.app.queue import heard_as
    from bot.app.worker import Presence, warm_up_words

    settings, t0 = runtime.settings, time.monotonic()
    presence = Presence(runtime.store, runtime.worker.database, lambda: heard_as(runtime.queue, settings))
    stop = threading.Event()
    # "rtcbot: worker on the": what scripts and tests wait for (tests/reliability/harness.py READY)
    from analyzers.tools.needs import pmd_ready

    log.info("rtcbot: worker on the %s queue, %s at a time, database schema %s: starting (warming up: %s; "
             "jobs may start meanwhile)", "redis" if settings.redis_url else "sqlite", workers,
             runtime.store.schema_version(), warm_up_words(settings, pmd_ready=pmd_ready()))
    threading.Thread(target=_warm_up, args=(runtime, presence, t0), name="warm-up", daemon=True).start()
    beating = threading.Thread(target=presence.run, args=(settings.heartbeat_s, stop), name="worker-heartbeat",
                               daemon=True)
    beating.start()
    threading.Thread(target=_sweeper, args=(runtime, settings.sweep_interval_s, stop),
                     name="sweep", daemon=True).start()
    try:
        consumer(runtime, workers).run()
    finally:
        stop.set()
        beating.join(5)  # its row removed: /healthz stops counting this worker at once
