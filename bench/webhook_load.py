"""Webhook acknowledgement under load: p50 / p99 of the time to a 202, and exactly-once enqueueing.

`rtcbot serve` (gunicorn, its default workers and threads) runs in a subprocess with a fresh
data folder, first with the SQLite queue and SQLite database (the defaults), then with the
Redis queue (127.0.0.1:6379, a database of its own) and, where PostgreSQL answers on
127.0.0.1:5432, with Redis and PostgreSQL (a database of its own, created and dropped here).
No worker runs, so every job stays in the queue where it can be counted.

The load generator is open-loop on loopback: delivery i is sent at t0 + i / rate by a pool of
threads (new connection each), each a signed `pull_request.opened` (GitHub's example payload,
its head SHA made unique, so each delivery is new work) with a unique `X-GitHub-Delivery`.
It stops by itself after `seconds`. A tenth of the deliveries are then sent again with the
same id (redeliveries) and must make no new job. Afterwards: deliveries recorded, job rows,
and the queue's messages, drained and counted per job id: each job enqueued exactly once.
"""

from __future__ import annotations

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
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench import ROOT, SHARED, Row, not_measured, row

PAYLOAD = SHARED / "fixtures" / "github" / "webhooks" / "pull_request" / "opened.payload.json"
SECRET = "bench-secret"
REDIS_URL = "redis://127.0.0.1:6379/11"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_DB = "rtcbot_bench"
TARGET_P99_MS = 25.0


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


def post(port: int, body: bytes, delivery: str, timeout: float = 10.0) -> tuple[int, float]:
    """One delivery; (status, seconds from connect to the whole answer read)."""
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
               "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sign(body),
               "User-Agent": "GitHub-Hookshot/bench"}
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/webhook", body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        status = resp.status
    except OSError:
        status = 0
    finally:
        conn.close()
    return status, time.perf_counter() - t0


@dataclass
class Load:
    sent: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    max_lag: float = 0.0  # how late the generator sent, at worst
    seconds: float = 0.0
    delivery_ids: list[str] = field(default_factory=list)
    redelivered: Counter[int] = field(default_factory=Counter)

    def pct(self, q: float) -> float:
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000 if xs else float("nan")


WARMUP = 20  # deliveries sent one by one before the timed window (counted, not timed)


def generate(port: int, rate: float, seconds: float, threads: int = 48, redeliver_every: int = 10) -> Load:
    """WARMUP deliveries, then open-loop load at `rate` per second for `seconds`; then
    redeliver every n-th timed id. Delivery ids: warm-up ones first."""
    gen = Deliveries()
    total = int(rate * seconds)
    load = Load(delivery_ids=[str(uuid.uuid4()) for _ in range(total + WARMUP)])
    for w in range(WARMUP):
        post(port, gen.body(total + w), load.delivery_ids[total + w])
    bodies = [gen.body(i) for i in range(total)]
    lock = threading.Lock()
    t0 = time.perf_counter() + 0.2

    def one(i: int) -> None:
        due = t0 + i / rate
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        lag = time.perf_counter() - due
        status, took = post(port, bodies[i], load.delivery_ids[i])
        with lock:
            load.sent += 1
            load.statuses[status] += 1
            load.latencies.append(took)
            load.max_lag = max(load.max_lag, lag)

    with ThreadPoolExecutor(max_workers=threads) as ex:
        list(ex.map(one, range(total)))
    load.seconds = time.perf_counter() - t0
    for i in range(0, total, redeliver_every):
        status, _ = post(port, bodies[i], load.delivery_ids[i])
        load.redelivered[status] += 1
    return load


# --------------------------------------------------------------------------- the service
@dataclass
class Backend:
    name: str
    env: dict[str, str]
    database_url: str | None = None
    redis_url: str | None = None


def start_service(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).parent / "rtcbot"
    argv = [str(exe), "serve", "--host", "127.0.0.1", "--port", str(port)]
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
            if c.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
    stop_service(proc)
    raise RuntimeError("rtcbot serve did not answer /healthz within 60 s")


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
    from bot.queue import make_huey
    from bot.settings import load_settings
    from bot.store import Delivery, JobRow, Store

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
        from sqlalchemy import select

        with store.session() as s:
            got = [d for d in s.scalars(select(Delivery.id)) if d in wanted]
            jobs = [(j.id, j.delivery_id) for j in s.scalars(select(JobRow))]
    finally:
        store.close()
    per_delivery = Counter(d for _, d in jobs)
    huey = make_huey(settings)
    ids: Counter[int] = Counter()
    while True:
        data = huey.storage.dequeue()  # raw messages: no task registry needed
        if data is None:
            break
        ids[int(huey.serializer.deserialize(data).args[0])] += 1
    job_ids = {j for j, _ in jobs}
    return Counts(
        deliveries=len(got), jobs=len(jobs),
        jobs_per_delivery_max=max(per_delivery.values(), default=0),
        queue_messages=sum(ids.values()), distinct_job_ids=len(ids),
        doubled=sum(1 for n in ids.values() if n > 1),
        queued_not_in_jobs=len(set(ids) - job_ids),
    )


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


def measure(backend: str, rate: float = 200, seconds: float = 30) -> Outcome:
    """One load run against `rtcbot serve` with backend "sqlite", "redis" or "redis+postgres"."""
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
    proc = start_service(env, port, tmp / "serve.log")
    try:
        load = generate(port, rate, seconds)
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
    label = f"Webhook ack ({o.backend}, {rate:.0f}/s for {seconds:.0f} s)"
    exactly = (c.deliveries == total and c.jobs == total and c.jobs_per_delivery_max == 1
               and c.queue_messages == total and c.distinct_job_ids == total and c.doubled == 0
               and c.queued_not_in_jobs == 0 and accepted == total)
    redelivered_ok = sum(load.redelivered.values()) == load.redelivered.get(200, 0)
    return [
        row(f"{label}: p50 / p99 latency to 202",
            f"{p50:.1f} / {p99:.1f} ms (sent {achieved:.0f}/s, generator at worst {load.max_lag * 1000:.0f} ms late)",
            f"p99 ≤ {TARGET_P99_MS:.0f} ms", p99 <= TARGET_P99_MS),
        row(f"{label}: enqueued exactly once",
            f"{c.distinct_job_ids - c.doubled}/{total} once, {c.doubled} doubled, "
            f"{total - c.distinct_job_ids} lost; {c.deliveries} deliveries, {c.jobs} jobs recorded; "
            f"answers {dict(sorted(load.statuses.items()))}; "
            f"{sum(load.redelivered.values())} redeliveries → {dict(load.redelivered)}",
            "none lost, none doubled", exactly and redelivered_ok),
    ]


def run(quick: bool = False) -> list[Row]:
    rate, seconds = (50.0, 2.0) if quick else (200.0, 30.0)
    rows: list[Row] = []
    for backend in ("sqlite", "redis", "redis+postgres"):
        try:
            rows += rows_for(measure(backend, rate, seconds), rate, seconds)
        except RuntimeError as e:
            rows.append(not_measured(f"Webhook ack ({backend})", f"p99 ≤ {TARGET_P99_MS:.0f} ms", str(e)))
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for r in run(quick):
        print(r)
