"""`rtcbot serve`: the webhook service (Flask app under gunicorn).

The default worker class is gevent: every connection is a greenlet, so hundreds of slow or idle
clients (a client that sends its request a byte at a time holds a thread of gunicorn's
`gthread` worker until it is done: 8 of them stalled the default 2 × 4 threads) wait side by
side while /healthz and /webhook keep answering. Each worker holds up to `--connections` of
them. On the internet, put a buffering reverse proxy in front (docs/github-app.md): it reads
whole requests before it hands them on, and bounds how long a client may take.

/metrics: each gunicorn worker counts in files of a private folder (prometheus_client's
multiprocess mode, `metrics_dir`), and whichever worker answers a scrape sums every worker's:
successive scrapes agree (with a registry per process they alternated between two sets of
numbers). The folder is emptied at start; gunicorn's `child_exit` hook marks dead workers.

Reload (SIGHUP to the master; `systemctl reload rtcbot-serve`): the master reads the settings
again (`--env-file`'s lines over its environment: a reload cannot change the environment systemd
gave it), then gunicorn forks new workers on them and retires the old ones, which answer what
they hold first; connections arriving meanwhile wait in the listening socket's queue. Settings
that no longer validate are logged and the running ones kept. The workers are ready within a
second because gevent patched the master first (bot/shell/gevent_first.py).

Stop (SIGTERM to the master, the unit's KillSignal): within about a second, what the workers
hold answered; their idle kept-alive connections are closed rather than waited out, and no
process tears its interpreter down (bot/app/serve_stop.py, bot/app/serve_worker.py).

gunicorn's control socket is the instance's own: `<data dir>/serve-<port>.ctl` (`control_socket`).

Logging: gunicorn's own lines and its access lines go to the root logger that rtcbot configured
(bot/core/logs.py), so every line has one format (text or RTCBOT_LOG_FORMAT=json, ISO times
with the zone) and one level (LOG_LEVEL, -v).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import warnings
from pathlib import Path
from typing import Any

import click

from bot.app.hardening import make_non_dumpable
from bot.app.serve_stop import stop_if_stopping, worker_exited
from bot.app.service_checks import service_settings, start_problem
from bot.app.settings import ServiceSettings
from bot.core.settings import SettingsError

SHM = "/dev/shm"
WORKER_CLASSES = ("gevent", "gthread")
# gevent: gunicorn's, which at a stop closes its idle kept-alive connections (bot/app/serve_worker.py)
WORKER_CLASS_PATHS = {"gevent": "bot.app.serve_worker.ServeWorker"}
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's name for it
# How long a connection may wait for its request's headers: for the first request as for the
# next ones on a kept-alive connection (gunicorn's gevent worker bounds both with `keepalive`,
# and closes the connection with no answer when it runs out). gunicorn's 2 s default dropped
# requests on a loaded host: the client, or this process, was not scheduled for 2 s between the
# connect and the headers (tests/security/test_webhook.py). 10 s is GitHub's own time limit for
# a delivery; a proxy in front keeps idle connections to us for less (docs/github-app.md).
KEEPALIVE_S = 10
UNIX_PATH_MAX = 108  # sun_path's size on Linux, its final NUL included
ACCESS_FORMAT = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(a)s"'  # the time is the line's own, in front

log = logging.getLogger(__name__)


def metrics_dir(data_dir: Path, port: int) -> Path:
    """The folder where gunicorn's workers keep their metric files (prometheus_client's
    multiprocess mode), private (0700) and emptied at start: files a previous run left would
    add its counts to this one's. PROMETHEUS_MULTIPROC_DIR, when the operator set it; else in
    memory, never on the data disk: the files are memory-mapped, and a write to one on a full
    disk kills the worker (SIGBUS) with the request it answers. systemd's RUNTIME_DIRECTORY
    (RuntimeDirectory=, /run/rtcbot) first, else /dev/shm (a container's too), else, where
    neither is writable, the data directory."""
    given = os.environ.get(MULTIPROC_ENV)
    path = Path(given) if given else default_metrics_dir(data_dir, port)
    path.mkdir(mode=0o700, exist_ok=True)
    if not given:
        _own_private(path)
    for old in path.glob("*.db"):
        old.unlink()
    return path


def default_metrics_dir(data_dir: Path, port: int) -> Path:
    """The metric files' folder without PROMETHEUS_MULTIPROC_DIR (`metrics_dir`); its parent made."""
    folder = _memory_folder(data_dir)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder / f"metrics-{port}-{_digest(data_dir)}"


def _memory_folder(data_dir: Path) -> Path:
    """Where the metric files go by default: a folder of this user's."""
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        return Path(runtime)
    if os.path.isdir(SHM) and os.access(SHM, os.W_OK):
        folder = Path(SHM) / f"rtcbot-{os.getuid()}"
        folder.mkdir(mode=0o700, exist_ok=True)
        _own_private(folder)  # /dev/shm is everyone's: a folder another user made is refused
        return folder
    return data_dir


def _own_private(path: Path) -> None:
    """`path` is a real folder of this user's, private (0700); OSError otherwise."""
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise OSError(f"{path} is not a folder of this user's")
    path.chmod(0o700)


def _digest(data_dir: Path) -> str:
    """A short name for the data directory: two services on one port (one at a time) with
    different data never share a folder."""
    return hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]


def _worker_exited(_server: Any, worker: Any) -> None:
    """gunicorn's child_exit hook: a dead worker's live gauges are dropped (its counters stay:
    what it counted still happened)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def _root_logger() -> type:
    """gunicorn's logger class, writing through the root logger: gunicorn's handlers (its own
    format on stderr, access lines on stdout) are removed, and its two loggers pass their
    records up at the root's level. A webhook answered below 500 gets no access line: its own
    line says more (bot/app/web.py)."""
    from gunicorn.glogging import Logger

    class RootLogger(Logger):  # type: ignore[misc]
        def setup(self, cfg: Any) -> None:
            super().setup(cfg)
            for logger in (self.error_log, self.access_log):
                for handler in list(logger.handlers):
                    logger.removeHandler(handler)
                logger.propagate = True
                logger.setLevel(logging.NOTSET)

        def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
            # a webhook has its own line, with its event, delivery and answer (bot/app/web.py):
            # an access line beside it would say half of it again, twice per delivery
            if getattr(req, "path", "") == "/webhook" and getattr(resp, "status_code", 500) < 500:
                return
            super().access(resp, req, environ, request_time)

    return RootLogger


def apply_env_file(env_file: Path, read: set[str]) -> None:
    """`env_file`'s VAR=value lines (systemd's EnvironmentFile, compose's env_file) over this
    process's environment; the names it set the last time (`read`, updated) and sets no longer
    are unset. OSError when it cannot be read."""
    from dotenv import dotenv_values

    if not env_file.is_file():
        raise FileNotFoundError(2, "no such file", str(env_file))
    values = {k: v for k, v in dotenv_values(env_file).items() if v is not None}
    for gone in read - values.keys():
        os.environ.pop(gone, None)
    os.environ.update(values)
    read.clear()
    read.update(values)


def reread_settings(env_file: Path | None, settings: ServiceSettings, read: set[str]) -> ServiceSettings:
    """At a reload (SIGHUP): the settings again, from the environment with `env_file`'s lines
    over it (names it set before and no longer sets are unset: `read`, updated); the running
    settings, with every problem logged, when the new ones do not validate (a reload never
    stops serve)."""
    from bot.app.service_checks import service_settings

    if env_file is not None:
        try:
            apply_env_file(env_file, read)
        except OSError as e:
            log.error("reload: cannot read %s (%s); the settings stay as they were", env_file, e.strerror)
            return settings
    try:
        new = service_settings(webhooks=True)
    except SettingsError as e:
        for line in e.lines or [str(e)]:
            log.error("reload: %s", line)
        log.error("reload: the settings stay as they were; the web workers are replaced")
        return settings
    log.info("reload: settings read again%s; the web workers are replaced", f" from {env_file}" if env_file else "")
    return new


def _gunicorn(settings: ServiceSettings, env_file: Path | None, read: set[str], options: dict[str, Any]) -> None:
    """gunicorn on `settings`; a SIGHUP reads them again (`reread_settings`, in the master) and
    replaces the web workers with ones on the new settings (gunicorn's graceful reload: new
    workers first, then the old ones finish what they hold and stop)."""
    from gunicorn.app.base import BaseApplication

    from bot.app.serve_stop import stopping_arbiter
    from bot.app.web import create_app

    class Server(BaseApplication):  # type: ignore[misc]
        current = settings
        loaded = False

        def run(self) -> None:  # BaseApplication's, with the arbiter that stops at once
            try:
                stopping_arbiter()(self).run()
            except RuntimeError as e:
                raise click.ClickException(str(e)) from None

        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)
            if self.loaded:  # a reload (BaseApplication's __init__ loads the first time)
                Server.current = reread_settings(env_file, Server.current, read)
            Server.loaded = True

        def load(self) -> Any:
            return create_app(Server.current)

    Server().run()


def _say_started(settings: ServiceSettings, host: str, port: int, schema: int | None) -> None:
    log.info("webhook service on http://%s:%s/webhook (database %s, schema %s, queue %s)", host, port,
             settings.database().split("://")[0], schema, "redis" if settings.redis_url else "sqlite")
    if not settings.metrics_token:  # off rather than open to whoever reaches the port
        log.info("/metrics is off: set RTCBOT_METRICS_TOKEN to serve it to a scraper with that bearer token")


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64), help="gunicorn worker processes.")
@click.option("--worker-class", "worker_class", type=click.Choice(WORKER_CLASSES), default="gevent",
              show_default=True, help="gunicorn worker class: gevent (one greenlet per connection) or gthread.")
@click.option("--connections", default=1000, show_default=True, type=click.IntRange(1, 100_000),
              help="Connections each gevent worker holds at once.")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 256),
              help="Threads per worker (gthread only).")
@click.option("--env-file", "env_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read this file's VAR=value lines again at each reload (SIGHUP), over the environment.")
def command(host: str, port: int, workers: int, worker_class: str, connections: int, threads: int,
            env_file: Path | None) -> None:
    """Receive GitHub webhooks: verify, record, enqueue, answer 202 (work happens in `rtcbot worker`).

    Settings come from the environment: RTCBOT_WEBHOOK_SECRET (required), DATABASE_URL,
    REDIS_URL, RTCBOT_DATA_DIR; see docs/github-app.md. SIGHUP: the settings read again (with
    --env-file's lines over the environment) and the web workers replaced, no delivery refused."""
    make_non_dumpable()  # a same-user process cannot read our secrets from /proc
    from bot.shell.exits import settings_exit

    read: set[str] = set()
    try:  # every setting checked before anything starts: one line each, exit 2
        if env_file is not None:
            apply_env_file(env_file, read)
        settings = service_settings(webhooks=True)
    except OSError as e:
        settings_exit(SettingsError(f"--env-file {env_file}: cannot read it ({e.strerror})"))
    except SettingsError as e:
        settings_exit(e)
    if worker_class == "gevent":
        # psycopg picks how it waits for the server when it is first imported (here, before the
        # fork; gevent patches `select` only in each worker): its C wait would hold a worker's
        # every greenlet while PostgreSQL answers one. select() is patched, so greenlets go on.
        os.environ.setdefault("PSYCOPG_WAIT_FUNC", "wait_select")
    given_env = dict(os.environ)
    _use_metrics_dir(settings, port)
    schema = _open_once(settings)
    _say_started(settings, host, port, schema)
    if worker_class == "gevent":
        # gevent patches the standard library in each worker, after this process imported ssl
        # (the LLM and GitHub clients' imports). It warns that TLS contexts made before then stay
        # blocking; the webhook service makes none: its one outbound client, GitHub's, runs
        # in `rtcbot worker`, and PostgreSQL's TLS is libpq's own.
        warnings.filterwarnings("ignore", message="Monkey-patching ssl after ssl has already been imported")
    options = _gunicorn_options(host, port, workers, worker_class, connections, threads, settings.data_dir)
    if MULTIPROC_ENV not in given_env:  # our folder, in memory: gone with the service
        options["on_exit"] = lambda _server: shutil.rmtree(os.environ[MULTIPROC_ENV], ignore_errors=True)
    _gunicorn(settings, env_file, read, options)


def _use_metrics_dir(settings: ServiceSettings, port: int) -> None:
    """Make the metrics folder and name it in PROMETHEUS_MULTIPROC_DIR, before prometheus_client
    is imported: it picks its storage on import."""
    try:
        metrics = metrics_dir(settings.data_dir, port)
    except OSError as e:
        raise click.ClickException(f"cannot make the metrics folder: {e}") from None
    os.environ[MULTIPROC_ENV] = str(metrics)


def _open_once(settings: ServiceSettings) -> int | None:
    """Fail here, once, on a bad database or queue URL; each gunicorn worker makes its own app
    after the fork, so this one's connections are closed before any fork. The database's schema
    version, migrated (bot/store/versions.py)."""
    from bot.app.web import create_app

    try:
        store = create_app(settings).extensions["rtcbot"].store
        schema: int | None = store.schema_version()
        store.close()
        return schema
    except SettingsError as e:
        raise click.ClickException(str(e)) from None
    except Exception as e:  # one line; a database error names DATABASE_URL (bot/store/settings.py)
        raise click.ClickException(start_problem(e, settings)) from None


def control_socket(data_dir: Path, port: int) -> dict[str, Any]:
    """gunicorn's control socket (`gunicornc -s PATH`), one per serve instance: in its data folder
    (private, 0700), named by its port like its metrics folder. gunicorn's default,
    `$HOME/.gunicorn/gunicorn.ctl`, is one per user: two instances of one user took it from
    each other. A path too long for a Unix socket (108 bytes) means no control socket."""
    path = data_dir.absolute() / f"serve-{port}.ctl"
    if len(os.fsencode(path)) >= UNIX_PATH_MAX:
        log.info("no gunicorn control socket: its path %s is too long for a Unix socket", path)
        return {"control_socket_disable": True}
    return {"control_socket": str(path), "control_socket_mode": 0o600}


def _gunicorn_options(host: str, port: int, workers: int, worker_class: str, connections: int,
                      threads: int, data_dir: Path) -> dict[str, Any]:
    """gunicorn's settings: its lines through the root logger, a dead worker's gauges dropped,
    its control socket its own."""
    return {
        **control_socket(data_dir, port),
        "bind": f"{host}:{port}", "workers": workers, "threads": threads,
        "worker_class": WORKER_CLASS_PATHS.get(worker_class, worker_class),
        "worker_connections": connections,
        "timeout": 30, "keepalive": KEEPALIVE_S, "accesslog": "-", "errorlog": "-", "logger_class": _root_logger(),
        "access_log_format": ACCESS_FORMAT,
        # the workers' heartbeat touches a file after every batch of requests: on a disk-backed
        # folder that can stall behind other processes' fsyncs (gunicorn's docs say so)
        "worker_tmp_dir": SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK) else None,
        "child_exit": _worker_exited,
        "worker_exit": worker_exited,  # a stopped worker exits at once (bot/app/serve_stop.py)
        "post_worker_init": stop_if_stopping,  # a stop signalled while the worker was booting
    }
