"""Webhook acknowledgement under load: p50 / p99 of the time to a 202, and exactly-once enqueueing.

`rtcbot serve` (gunicorn, its default workers and threads unless told otherwise) runs in a
subprocess with a fresh data folder, first with the SQLite queue and SQLite database (the
defaults), then with the Redis queue (127.0.0.1:6379, a database of its own) and, where
PostgreSQL answers on 127.0.0.1:5432, with Redis and PostgreSQL (a database of its own,
created and dropped here). No worker runs, so every job stays in the queue where it can be
counted.

The load generator is open-loop on loopback and cheap, so that it measures the service and
not itself: one asyncio event loop, raw HTTP/1.1 over sockets, every request (a signed
`pull_request.opened`, GitHub's example payload with its head SHA made unique, so each
delivery is new work, and a unique `X-GitHub-Delivery`) built before the clock starts.
Delivery i is due at t0 + i / rate; its latency is counted from that due time to the last
byte of the answer, so a generator that falls behind shows up in the figure instead of
hiding it (no coordinated omission), and how late it was is reported beside it. Connections
are kept alive and reused (a pool that grows when every connection is busy), or with
`connections="new"` opened for each delivery as GitHub does. It stops by itself after
`seconds`. A tenth of the deliveries are then sent again with the same id (redeliveries) and
must make no new job. Afterwards: deliveries recorded, job rows, and the queue's messages,
drained and counted per job id: each job enqueued exactly once.

    .venv/bin/python -m bench.webhook_load [--quick] [--backend sqlite,redis] [--rate 200]
        [--seconds 30] [--connections keepalive|new] [--workers N] [--threads N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import hmac
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import FIXTURES, ROOT, Row, not_measured, row

PAYLOAD = FIXTURES / "github" / "webhooks" / "pull_request" / "opened.payload.json"
SECRET = "bench-secret"
REDIS_URL = "redis://127.0.0.1:6379/11"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_DB = "rtcbot_bench"
TARGET_P99_MS = 25.0
BACKENDS = ("sqlite", "redis", "redis+postgres")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Deliveries:
    """Signed pull_request.opened bodies, each with its own head SHA."""

    def __init__(self, path: Path = PAYLOAD) -> None:
        self.template = json.loads(path.read_text(encoding="utf-8"))

    def body(self, i: int) -> bytes:
        d = self.template
        sha = hashlib.sha1(f"bench-{i}".encode()).hexdigest()
        d["pull_request"]["head"]["sha"] = sha
        d["pull_request"]["number"] = d["number"] = 1 + i % 50
        return json.dumps(d).encode()


def request_bytes(port: int, body: bytes, delivery: str, *, close: bool = False,
                  event: str = "pull_request") -> bytes:
    """One whole HTTP/1.1 request, headers and body, as GitHub sends a delivery."""
    head = (f"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "User-Agent: GitHub-Hookshot/bench\r\nAccept: */*\r\n"
            "Content-Type: application/json\r\n"
            f"X-GitHub-Event: {event}\r\nX-GitHub-Delivery: {delivery}\r\n"
            f"X-GitHub-Hook-ID: 1\r\nX-Hub-Signature-256: {sign(body)}\r\n"
            f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
    return head.encode("ascii") + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """(status, whether the server keeps the connection open) of one answer, read whole."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length, keep = 0, lines[0].startswith("HTTP/1.1")
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection":
            keep = value.strip().lower() == "keep-alive" or (keep and value.strip().lower() != "close")
    if length:
        await reader.readexactly(length)
    return status, keep


Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Client:
    """Raw HTTP/1.1 on loopback: a pool of kept-alive connections, or a new one per request.

    An idle connection is reused only within `idle_s` (under gunicorn's 2 s keep-alive, so the
    server has not closed it meanwhile); one that fails before any byte of the answer came back
    was closed by the server while idle, and the request is sent once more on a new one."""

    def __init__(self, port: int, *, keepalive: bool = True, timeout: float = 10.0,
                 idle_s: float = 1.0) -> None:
        self.port, self.keepalive, self.timeout, self.idle_s = port, keepalive, timeout, idle_s
        self.idle: list[tuple[float, Conn]] = []
        self.opened = 0

    async def _connect(self) -> Conn:
        self.opened += 1
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return reader, writer

    def _take(self) -> Conn | None:
        now = time.perf_counter()
        while self.idle:
            since, conn = self.idle.pop()
            if now - since < self.idle_s and not conn[0].at_eof():
                return conn
            conn[1].close()
        return None

    async def send(self, data: bytes) -> int:
        """The answer's status; 0 when there was none (refused, reset, timed out)."""
        for attempt in (0, 1):
            conn = self._take() if self.keepalive else None
            reused = conn is not None
            try:
                if conn is None:
                    conn = await asyncio.wait_for(self._connect(), self.timeout)
                reader, writer = conn
                writer.write(data)
                status, keep = await asyncio.wait_for(read_response(reader), self.timeout)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                    ValueError, IndexError) as e:
                if conn is not None:
                    conn[1].close()
                stale = reused and isinstance(e, (asyncio.IncompleteReadError, ConnectionError)) \
                    and not getattr(e, "partial", b"")
                if attempt == 0 and stale:
                    continue
                return 0
            if self.keepalive and keep:
                self.idle.append((time.perf_counter(), conn))
            else:
                writer.close()
            return status
        return 0

    def close(self) -> None:
        for _, (_, writer) in self.idle:
            writer.close()
        self.idle.clear()


@dataclass
class Load:
    sent: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)  # due time → whole answer read
    service: list[float] = field(default_factory=list)  # sent → whole answer read
    lateness: list[float] = field(default_factory=list)  # due time → sent
    max_lag: float = 0.0  # how late the generator sent, at worst
    seconds: float = 0.0
    connections: int = 0  # opened during the timed window
    generator_cpu_s: float = 0.0  # this process's CPU time over the timed window
    server_cpu_s: float = 0.0  # the server's processes' CPU time over the timed window (0: unknown)
    mode: str = "keepalive"
    delivery_ids: list[str] = field(default_factory=list)
    redelivered: Counter[int] = field(default_factory=Counter)

    def pct(self, q: float, xs: Sequence[float] | None = None) -> float:
        ys = sorted(self.latencies if xs is None else xs)
        return ys[min(len(ys) - 1, int(q * len(ys)))] * 1000 if ys else float("nan")


WARMUP = 20  # deliveries sent one by one before the timed window (counted, not timed)


async def _generate(port: int, rate: float, seconds: float, keepalive: bool, redeliver_every: int,
                    max_in_flight: int, server_pgid: int | None) -> Load:
    gen = Deliveries()
    total = int(rate * seconds)
    load = Load(delivery_ids=[str(uuid.uuid4()) for _ in range(total + WARMUP)],
                mode="keepalive" if keepalive else "new")
    close = not keepalive
    client = Client(port, keepalive=keepalive)
    for w in range(WARMUP):
        await client.send(request_bytes(port, gen.body(total + w), load.delivery_ids[total + w], close=close))
    bodies = [gen.body(i) for i in range(total)]
    requests = [request_bytes(port, bodies[i], load.delivery_ids[i], close=close) for i in range(total)]
    gate = asyncio.Semaphore(max_in_flight)
    opened_before = client.opened

    async def one(data: bytes, due: float) -> None:
        async with gate:
            sent = time.perf_counter()
            status = await client.send(data)
        done = time.perf_counter()
        load.sent += 1
        load.statuses[status] += 1
        load.latencies.append(done - due)
        load.service.append(done - sent)
        load.lateness.append(max(0.0, sent - due))

    tasks = []
    gc.collect()
    gc.disable()  # no collector pause of the generator's inside the window
    server0 = cpu_seconds(server_pgid) if server_pgid else 0.0
    cpu0 = time.process_time()
    try:
        t0 = time.perf_counter() + 0.2
        for i in range(total):
            due = t0 + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(one(requests[i], due)))
        await asyncio.gather(*tasks)
        load.seconds = time.perf_counter() - t0
    finally:
        gc.enable()
    load.generator_cpu_s = time.process_time() - cpu0
    load.server_cpu_s = cpu_seconds(server_pgid) - server0 if server_pgid else 0.0
    load.connections = client.opened - opened_before
    load.max_lag = max(load.lateness, default=0.0)
    for i in range(0, total, redeliver_every):
        status = await client.send(request_bytes(port, bodies[i], load.delivery_ids[i], close=close))
        load.redelivered[status] += 1
    client.close()
    return load


def generate(port: int, rate: float, seconds: float, *, connections: str = "keepalive",
             redeliver_every: int = 10, max_in_flight: int = 256, server_pgid: int | None = None) -> Load:
    """WARMUP deliveries, then open-loop load at `rate` per second for `seconds`; then
    redeliver every n-th timed id. Delivery ids: warm-up ones first. `server_pgid`: the
    server's process group, whose CPU time over the window is then reported."""
    if connections not in ("keepalive", "new"):
        raise ValueError(f"connections: 'keepalive' or 'new', not {connections!r}")
    return asyncio.run(_generate(port, rate, seconds, connections == "keepalive", redeliver_every,
                                 max_in_flight, server_pgid))


# --------------------------------------------------------------------------- the service
@dataclass
class Backend:
    name: str
    env: dict[str, str]
    database_url: str | None = None
    redis_url: str | None = None


def start_service(env: dict[str, str], port: int, log: Path, *, workers: int | None = None,
                  threads: int | None = None, worker_class: str | None = None) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).parent / "rtcbot"
    argv = [str(exe), "serve", "--host", "127.0.0.1", "--port", str(port)]
    if workers is not None:
        argv += ["--workers", str(workers)]
    if threads is not None:
        argv += ["--threads", str(threads)]
    if worker_class is not None:
        argv += ["--worker-class", worker_class]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"rtcbot serve exited ({proc.returncode}): {tail[0][:200]}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            if c.getresponse().status in (200, 503):  # 503: it answers, with no worker running
                return proc
        except OSError:
            time.sleep(0.2)
    stop_service(proc)
    raise RuntimeError("rtcbot serve did not answer /healthz within 60 s")


def cpu_seconds(pgid: int) -> float:
    """User + system CPU time of every live process in the process group (gunicorn's master
    and workers), from /proc; 0.0 where /proc is not there."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:  # fields after "(comm)": state ppid pgrp … utime(11) stime(12)
            total += int(fields[11]) + int(fields[12])
    return total / tick


def stop_service(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@dataclass
class Counts:
    deliveries: int
    jobs: int
    jobs_per_delivery_max: int
    queue_messages: int
    distinct_job_ids: int
    doubled: int
    queued_not_in_jobs: int


def count(settings_env: dict[str, str], delivery_ids: list[str]) -> Counts:
    """Deliveries and jobs in the store; queue messages drained and counted per job id."""
    from bot.app.settings import load_settings
    from bot.store.store import Store

    saved = {k: os.environ.get(k) for k in settings_env}
    os.environ.update(settings_env)
    try:
        settings = load_settings()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    store = Store(settings.database())
    wanted = set(delivery_ids)
    try:
        got = [d for d in wanted if store.deliveries.get(d) is not None]
        jobs = [(j.id, j.delivery_id) for j in store.jobs.where()]
    finally:
        store.close()
    per_delivery = Counter(d for _, d in jobs)
    ids = Counter(queued_job_ids(settings))
    job_ids = {j for j, _ in jobs}
    return Counts(
        deliveries=len(got), jobs=len(jobs),
        jobs_per_delivery_max=max(per_delivery.values(), default=0),
        queue_messages=sum(ids.values()), distinct_job_ids=len(ids),
        doubled=sum(1 for n in ids.values() if n > 1),
        queued_not_in_jobs=len(set(ids) - job_ids),
    )


def queued_job_ids(settings: Any) -> list[int]:
    """The job id each message in the queue names (its wake-ups carry one), read raw."""
    import sqlite3

    from bot.app.queue import LIST_KEY, QUEUE_NAME, RedisQueue, make_queue

    q = make_queue(settings)
    if isinstance(q, RedisQueue):
        raw = q.conn.lrange(LIST_KEY, 0, -1)
    else:
        with sqlite3.connect(settings.data_dir / "queue.sqlite3") as conn:
            raw = [d for (d,) in conn.execute("select data from task where queue = ?", (QUEUE_NAME,))]
    return [int(json.loads(d)["args"][0]) for d in raw]  # type: ignore[union-attr]


def postgres_db() -> str | None:
    """A fresh database of our own on the local PostgreSQL, or None when it does not answer."""
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as c:
            c.execute(f"DROP DATABASE IF EXISTS {PG_DB}")
            c.execute(f"CREATE DATABASE {PG_DB}")
    except Exception:
        return None
    return f"postgresql://postgres@127.0.0.1:5432/{PG_DB}"


def drop_postgres_db() -> None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as c:
            c.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
    except Exception:
        pass


def redis_ready() -> bool:
    try:
        import redis

        r = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
        r.ping()
        r.flushdb()  # database 11 is this benchmark's own
        return True
    except Exception:
        return False


@dataclass
class Outcome:
    backend: str
    load: Load
    counts: Counts


def measure(backend: str, rate: float = 200, seconds: float = 30, *, connections: str = "keepalive",
            workers: int | None = None, threads: int | None = None, worker_class: str | None = None) -> Outcome:
    """One load run against `rtcbot serve` with backend "sqlite", "redis" or "redis+postgres"
    (`workers` / `threads` / `worker_class`: passed to `rtcbot serve`; None: its defaults)."""
    tmp = Path(tempfile.mkdtemp(prefix="rtcbot-bench-hooks-"))
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(RTCBOT_WEBHOOK_SECRET=SECRET, RTCBOT_DATA_DIR=str(tmp / "data"))
    own = {"RTCBOT_WEBHOOK_SECRET": SECRET, "RTCBOT_DATA_DIR": str(tmp / "data")}
    if backend.startswith("redis"):
        if not redis_ready():
            raise RuntimeError("Redis does not answer on 127.0.0.1:6379")
        env["REDIS_URL"] = own["REDIS_URL"] = REDIS_URL
    if backend.endswith("postgres"):
        url = postgres_db()
        if url is None:
            raise RuntimeError("PostgreSQL does not answer on 127.0.0.1:5432")
        env["DATABASE_URL"] = own["DATABASE_URL"] = url
    port = free_port()
    proc = start_service(env, port, tmp / "serve.log", workers=workers, threads=threads,
                         worker_class=worker_class)
    try:
        load = generate(port, rate, seconds, connections=connections, server_pgid=proc.pid)
    finally:
        stop_service(proc)
    try:
        counts = count(own, load.delivery_ids)
    finally:
        if backend.endswith("postgres"):
            drop_postgres_db()
        shutil.rmtree(tmp, ignore_errors=True)
    return Outcome(backend, load, counts)


def rows_for(o: Outcome, rate: float, seconds: float) -> list[Row]:
    load, c = o.load, o.counts
    total = int(rate * seconds) + WARMUP
    accepted = load.statuses.get(202, 0) + WARMUP
    p50, p99 = load.pct(0.50), load.pct(0.99)
    achieved = load.sent / max(load.seconds, 1e-9)
    n = max(1, load.sent)
    conns = "kept-alive connections" if load.mode == "keepalive" else "a new connection each"
    label = f"Webhook ack ({o.backend}, {rate:.0f}/s for {seconds:.0f} s)"
    exactly = (c.deliveries == total and c.jobs == total and c.jobs_per_delivery_max == 1
               and c.queue_messages == total and c.distinct_job_ids == total and c.doubled == 0
               and c.queued_not_in_jobs == 0 and accepted == total)
    redelivered_ok = sum(load.redelivered.values()) == load.redelivered.get(200, 0)
    return [
        row(f"{label}: p50 / p99 latency to 202",
            f"{p50:.1f} / {p99:.1f} ms from the due time (sent {achieved:.0f}/s on {conns}, "
            f"{load.connections} opened; generator late p99 {load.pct(0.99, load.lateness):.1f} ms, "
            f"at worst {load.max_lag * 1000:.0f} ms; CPU per delivery: server "
            f"{load.server_cpu_s / n * 1000:.2f} ms, generator {load.generator_cpu_s / n * 1000:.2f} ms)",
            f"p99 ≤ {TARGET_P99_MS:.0f} ms", p99 <= TARGET_P99_MS),
        row(f"{label}: enqueued exactly once",
            f"{c.distinct_job_ids - c.doubled}/{total} once, {c.doubled} doubled, "
            f"{total - c.distinct_job_ids} lost; {c.deliveries} deliveries, {c.jobs} jobs recorded; "
            f"answers {dict(sorted(load.statuses.items()))}; "
            f"{sum(load.redelivered.values())} redeliveries → {dict(load.redelivered)}",
            "none lost, none doubled", exactly and redelivered_ok),
    ]


def run(quick: bool = False, *, backends: Sequence[str] = BACKENDS, rate: float | None = None,
        seconds: float | None = None, connections: str = "keepalive", workers: int | None = None,
        threads: int | None = None, worker_class: str | None = None) -> list[Row]:
    rate = rate or (50.0 if quick else 200.0)
    seconds = seconds or (2.0 if quick else 30.0)
    rows: list[Row] = []
    for backend in backends:
        try:
            o = measure(backend, rate, seconds, connections=connections, workers=workers, threads=threads,
                        worker_class=worker_class)
            rows += rows_for(o, rate, seconds)
        except RuntimeError as e:
            rows.append(not_measured(f"Webhook ack ({backend})", f"p99 ≤ {TARGET_P99_MS:.0f} ms", str(e)))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.webhook_load", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="50/s for 2 s (a smoke run)")
    ap.add_argument("--backend", default=",".join(BACKENDS), help="comma-separated subset of: " + ", ".join(BACKENDS))
    ap.add_argument("--rate", type=float, help="deliveries per second (default 200)")
    ap.add_argument("--seconds", type=float, help="length of the timed window (default 30)")
    ap.add_argument("--connections", choices=("keepalive", "new"), default="keepalive")
    ap.add_argument("--workers", type=int, help="rtcbot serve --workers (default: its own)")
    ap.add_argument("--threads", type=int, help="rtcbot serve --threads (default: its own)")
    ap.add_argument("--worker-class", choices=("gevent", "gthread"),
                    help="rtcbot serve --worker-class (default: its own)")
    args = ap.parse_args(argv)
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        ap.error(f"unknown backend {unknown[0]!r} (known: {', '.join(BACKENDS)})")
    for r in run(args.quick, backends=backends, rate=args.rate, seconds=args.seconds,
                 connections=args.connections, workers=args.workers, threads=args.threads,
                 worker_class=args.worker_class):
        print(f"{r['figure']}: {r['value']}  (target {r['target'] or '—'}, met {r['met']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
