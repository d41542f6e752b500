"""`rtcbot worker`: run the queued jobs (huey consumer) and the recovery sweep."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import click

from bot.app.hardening import make_non_dumpable
from bot.core.service_checks import service_settings, start_problem
from bot.core.settings import SettingsError

if TYPE_CHECKING:
    from huey.consumer import Consumer

    from bot.app.jobs import Runtime

log = logging.getLogger("rtcbot.worker")


# A Redis queue blocks until a message arrives; a SQLite queue is polled: every 10 ms after a
# job, backing off to every 50 ms when idle (a poll is a read of a local file, ~50 µs), so a
# delivery waits ~25 ms at most for an idle worker rather than up to huey's default of 10 s.
POLL_INITIAL_S = 0.01
POLL_MAX_S = 0.05


def consumer(runtime: Runtime, workers: int) -> Consumer:
    """huey's consumer as `rtcbot worker` runs it (threads; no periodic tasks: the sweep is ours)."""
    return runtime.huey.create_consumer(workers=workers, worker_type="thread", periodic=False,
                                        initial_delay=POLL_INITIAL_S, max_delay=POLL_MAX_S)


def _sweeper(runtime: object, interval: float, stop: threading.Event) -> None:
    from bot.app.jobs import Runtime

    assert isinstance(runtime, Runtime)
    while True:
        try:
            counts = runtime.sweep()
            if any(counts.values()):
                log.warning("sweep: %s", counts)
        except Exception:
            log.exception("sweep failed")
        if stop.wait(interval):
            return


@click.command("worker")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Jobs run at once (threads). Default: RTCBOT_WORKERS or 2.")
def command(workers: int | None) -> None:
    """Run analyses from the queue (SQLite by default, Redis with REDIS_URL) and publish check runs.

    A periodic sweep re-enqueues jobs whose worker died and routes deliveries that were
    recorded but never enqueued; see docs/github-app.md."""
    make_non_dumpable()  # a same-user process cannot read our secrets from /proc
    from bot.core.exits import settings_exit

    try:  # every setting checked (the private key parsed) before anything starts: exit 2
        settings = service_settings(app=True)
    except SettingsError as e:
        settings_exit(e)
    from bot.app.jobs import Runtime

    # logging: configured once by the command line (bot/core/logs.py), at info for the worker
    try:
        runtime = Runtime(settings)
    except Exception as e:  # one line; a database error names DATABASE_URL (bot/core/settings.py)
        raise click.ClickException(start_problem(e, settings)) from None
    from bot.app.queue import QueueUnavailable, check

    try:  # refuse to start on a queue that does not answer, rather than log its errors in a loop
        check(runtime.huey, settings)
    except QueueUnavailable as e:
        runtime.store.close()
        raise click.ClickException(f"cannot start: {e}") from None
    threading.Thread(target=runtime.warm_up, name="warm-up", daemon=True).start()
    stop = threading.Event()
    threading.Thread(target=_sweeper, args=(runtime, settings.sweep_interval_s, stop),
                     name="sweep", daemon=True).start()
    running = consumer(runtime, workers or settings.workers)
    click.echo(f"rtcbot: worker on the {'redis' if settings.redis_url else 'sqlite'} queue, "
               f"{workers or settings.workers} at a time", err=True)
    try:
        running.run()
    finally:
        stop.set()
