"""`rtcbot serve`: the webhook service (Flask app under gunicorn)."""

from __future__ import annotations

import os
from typing import Any

import click

from bot.settings import SettingsError, load_settings

GROUP = "root"
SHM = "/dev/shm"


def _gunicorn(app_factory: Any, options: dict[str, Any]) -> None:
    from gunicorn.app.base import BaseApplication

    class Server(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return app_factory()

    Server().run()


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64), help="gunicorn worker processes.")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 256), help="Threads per worker.")
def command(host: str, port: int, workers: int, threads: int) -> None:
    """Receive GitHub webhooks: verify, record, enqueue, answer 202 (work happens in `rtcbot worker`).

    Settings come from the environment: RTCBOT_WEBHOOK_SECRET (required), DATABASE_URL,
    REDIS_URL, RTCBOT_DATA_DIR; see docs/github-app.md."""
    try:
        settings = load_settings()
    except Exception as e:
        raise click.ClickException(f"bad service settings: {e}") from None
    if not settings.webhook_secret:
        raise click.ClickException(
            "refusing to start without a webhook secret: set RTCBOT_WEBHOOK_SECRET to the secret "
            "configured for the GitHub App (unsigned deliveries would be accepted otherwise)")
    from bot.app import create_app

    try:
        # fail here, once, on a bad database or queue URL; each gunicorn worker makes its own
        # app after the fork, so this one's connections are closed before any fork
        create_app(settings).extensions["rtcbot"].store.close()
    except SettingsError as e:
        raise click.ClickException(str(e)) from None
    except Exception as e:
        raise click.ClickException(f"cannot start: {type(e).__name__}: {e}") from None
    click.echo(f"rtcbot: webhook service on http://{host}:{port}/webhook "
               f"(database {settings.database().split('://')[0]}, queue {'redis' if settings.redis_url else 'sqlite'})",
               err=True)
    _gunicorn(lambda: create_app(settings), {
        "bind": f"{host}:{port}", "workers": workers, "threads": threads, "worker_class": "gthread",
        "timeout": 30, "accesslog": "-", "errorlog": "-", "loglevel": "info",
        # the workers' heartbeat touches a file after every batch of requests: on a disk-backed
        # folder that can stall behind other processes' fsyncs (gunicorn's docs say so)
        "worker_tmp_dir": SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK) else None,
    })
