"""`rtcbot worker`: run the queued jobs (huey consumer) and the recovery sweep."""

from __future__ import annotations

import logging
import threading

import click

from bot.settings import SettingsError, load_settings

GROUP = "root"
log = logging.getLogger("rtcbot.worker")


def _warm_up() -> None:
    """The analyzers' one-off start-up costs (embedding model, PMD's JVM), off the first job."""
    try:
        from analyzers.crscore.analyzer import warm_up

        warm_up()
    except Exception:  # an analyzer that cannot warm up reports why when it runs
        log.warning("warm-up failed; analyzers start on first use", exc_info=True)


def _sweeper(runtime: object, interval: float, stop: threading.Event) -> None:
    from bot.jobs import Runtime

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
    try:
        settings = load_settings()
        settings.require_app()
    except SettingsError as e:
        raise click.ClickException(str(e)) from None
    except Exception as e:
        raise click.ClickException(f"bad service settings: {e}") from None
    from bot.jobs import Runtime

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        runtime = Runtime(settings)
    except Exception as e:
        raise click.ClickException(f"cannot start: {type(e).__name__}: {e}") from None
    threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()
    stop = threading.Event()
    threading.Thread(target=_sweeper, args=(runtime, settings.sweep_interval_s, stop),
                     name="sweep", daemon=True).start()
    consumer = runtime.huey.create_consumer(workers=workers or settings.workers, worker_type="thread",
                                            periodic=False, initial_delay=0.05, max_delay=1.0)
    click.echo(f"rtcbot: worker on the {'redis' if settings.redis_url else 'sqlite'} queue, "
               f"{workers or settings.workers} at a time", err=True)
    try:
        consumer.run()
    finally:
        stop.set()
