"""PostgreSQL and Redis of the suite's own, on free loopback ports in a temporary folder, so that
a scenario can stop, kill and restart them mid-run (never the machine's shared instances).

PostgreSQL: `initdb` and `pg_ctl` from /usr/lib/postgresql/<version>/bin (or PATH); initdb
refuses to run as root, so as root both run as `nobody` through `setpriv`. Trust auth on
127.0.0.1 only, fsync off (the suite measures recovery, not durability across power cuts).
Redis: `redis-server` without persistence, so a restart loses every queued message (the
worst case for the queue: the store must be the truth).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

Server = TypeVar("Server", "Postgres", "Redis")


class ServiceUnavailable(RuntimeError):
    """A binary is missing or a server would not start (the reason, one line)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float, up: bool = True) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                if up:
                    return True
        except OSError:
            if not up:
                return True
        time.sleep(0.05)
    return False


def pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which(name)


def _as_user() -> list[str]:
    """The command prefix that runs PostgreSQL's tools unprivileged when we are root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise ServiceUnavailable("running as root and setpriv is missing (initdb refuses root)")
    pw = pwd.getpwnam("nobody")
    return [setpriv, f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]


class Postgres:
    """A throw-away PostgreSQL cluster: `start()`, `stop(mode)`, `restart()`, `url(database)`."""

    def __init__(self) -> None:
        initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
        if not initdb or not pg_ctl:
            raise ServiceUnavailable("PostgreSQL's initdb/pg_ctl are not installed")
        self.pg_ctl = pg_ctl
        self.prefix = _as_user()
        self.root = Path(tempfile.mkdtemp(prefix="rtcbot-chaos-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if self.prefix:
            pw = pwd.getpwnam("nobody")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self._run([initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"],
                  "initdb")

    def _run(self, argv: list[str], what: str) -> None:
        r = subprocess.run([*self.prefix, *argv], capture_output=True, text=True, timeout=120, check=False)
        if r.returncode != 0:
            raise ServiceUnavailable(f"{what} failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")

    def start(self) -> None:
        opts = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run([self.pg_ctl, "-D", str(self.data), "-l", str(self.root / "log"), "-o", opts, "-w", "-t", "60",
                   "start"], "pg_ctl start")

    def stop(self, mode: str = "fast") -> None:
        """`fast` closes every session (a restart); `immediate` is a crash (recovery at start)."""
        self._run([self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"], "pg_ctl stop")

    def restart(self, down_s: float = 0.0, mode: str = "fast") -> None:
        self.stop(mode)
        time.sleep(down_s)
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        try:
            self.stop("immediate")
        except ServiceUnavailable:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


class Redis:
    """A throw-away redis-server without persistence: `start()`, `stop()`, `restart()`."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise ServiceUnavailable("redis-server is not installed")
        self.exe = exe
        self.root = Path(tempfile.mkdtemp(prefix="rtcbot-chaos-redis-"))
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.root / "log", "ab")  # noqa: SIM115 (the server's, closed with it)
        self.proc = subprocess.Popen(
            [self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.root), "--protected-mode", "no"], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if not _wait_port(self.port, 20):
            raise ServiceUnavailable(f"redis-server did not listen on {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # SIGKILL: whatever was queued is gone
            self.proc.wait(10)
        self.proc = None
        _wait_port(self.port, 5, up=False)

    def restart(self, down_s: float = 0.0) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()

    def flush(self) -> None:
        import redis

        redis.Redis.from_url(self.url).flushall()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def started(make: Callable[[], Server]) -> Iterator[Server]:
    """A server of the suite's own (`Postgres`, `Redis`) started, and closed after the block; a
    test that cannot have one is skipped or failed as tests.support.require says."""
    from tests.support import require

    try:
        server = make()
        server.start()
    except ServiceUnavailable as e:
        require(False, str(e))
        raise  # unreachable: require skips or fails
    try:
        yield server
    finally:
        server.close()
