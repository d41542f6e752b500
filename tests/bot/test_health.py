"""/healthz and /metrics tell the truth about the workers (bot/app/health.py, bot/store/workers.py),
and an outage is said in two lines (bot/app/outage.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.app.health import verdict
from bot.app.outage import Outage
from bot.app.queue import MARK_KEY, RedisQueue, heard_as, identity, make_queue, same_queue
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.app.worker import Presence
from bot.store.versions import SCHEMA_VERSION
from tests.bot.app_support import REDIS_URL, deliver, make_settings, redis_ok, scrape, serve
from tests.bot.test_app import payload

# A beat must still be live when the request after it is answered: 1 s was within reach of a
# loaded CI machine (the test process descheduled between the two); 3 s is not.
STALE_S = 3.0
QUEUE_AGE_S = 1.0  # nothing is checked before it passes: no need to make it longer


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, Runtime]]:
    """The webhook app over HTTP on a SQLite store, no worker running; short health settings."""
    rt = Runtime(make_settings(tmp_path, worker_stale_s=STALE_S, health_max_queue_age_s=QUEUE_AGE_S))
    with serve(create_app(rt.settings, runtime=rt)) as url:
        yield url, rt
    rt.store.close()


def test_healthz_is_503_with_no_worker_and_200_with_one_beating(service: tuple[str, Runtime]) -> None:
    url, rt = service
    h = httpx.get(f"{url}/healthz")
    assert h.status_code == 503, h.text
    body = h.json()
    assert body["status"] == "unhealthy" and body["database"] == "ok" and body["workers"]["live"] == 0
    assert body["schema"] == SCHEMA_VERSION  # the database's schema version (bot/store/versions.py)
    assert len(body["reasons"]) == 1 and body["reasons"][0].startswith("no live worker")
    assert "RTCBOT_WORKER_STALE_S" in body["reasons"][0]

    presence, stop = Presence(rt.store, rt.worker.database), threading.Event()
    beating = threading.Thread(target=presence.run, args=(0.2, stop), daemon=True)
    started = time.time()
    beating.start()
    try:
        # its first beat: at once on an idle machine, later on a loaded one (not a fixed 0.3 s)
        deadline = time.monotonic() + 30
        while (h := httpx.get(f"{url}/healthz")).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert h.status_code == 200, h.text
        body = h.json()
        assert body["status"] == "ok" and "reasons" not in body and body["oldest_queued_job_age_s"] is None
        [worker] = body["workers"]["list"]
        # the last beat came after the thread started (the figure is rounded to 0.1 s)
        assert 0.0 <= worker["beat_s_ago"] <= time.time() - started + 0.05, worker
        assert worker["pid"] == presence.pid and worker["ready"] is False
        presence.mark_ready()
        assert httpx.get(f"{url}/healthz").json()["workers"]["list"][0]["ready"] is True
    finally:
        stop.set()
        beating.join(5)
    # a worker that stops removes its row: unhealthy at once, not RTCBOT_WORKER_STALE_S later
    assert rt.store.workers.live(60) == []
    assert httpx.get(f"{url}/healthz").status_code == 503


def test_livez_answers_200_with_no_worker_while_healthz_and_readyz_are_503(service: tuple[str, Runtime]) -> None:
    url, _ = service
    assert httpx.get(f"{url}/healthz").status_code == 503
    ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 503 and ready.json()["reasons"][0].startswith("no live worker")
    live = httpx.get(f"{url}/livez")
    assert live.status_code == 200 and live.json() == {"status": "alive"}


def test_a_worker_on_another_queue_is_not_counted(service: tuple[str, Runtime], tmp_path: Path) -> None:
    """A worker given another REDIS_URL beats into the same database: this serve's jobs would
    wait for the sweep's requeue. It is not counted, and the reason names its queue."""
    url, rt = service
    other = identity(make_settings(tmp_path, redis_url="redis://Queue.internal/3"))
    Presence(rt.store, rt.worker.database, other).beat()
    h = httpx.get(f"{url}/healthz")
    assert h.status_code == 503, h.text
    [reason] = h.json()["reasons"]
    assert reason.startswith("no live worker on this service's queue: 1 live worker(s) consume another queue")
    assert "redis://queue.internal:6379/3#rtcbot" in reason and "REDIS_URL" in reason
    assert h.json()["workers"] == {"live": 0, "list": [], "on_other_queues": 1}
    assert "rtcbot_workers_live 0.0" in scrape(url).text
    Presence(rt.store, rt.worker.database, identity(rt.settings)).beat()
    h = httpx.get(f"{url}/healthz")
    assert h.status_code == 200 and h.json()["workers"]["live"] == 1, h.text


def test_one_queue_has_one_identity_however_its_url_is_written(tmp_path: Path) -> None:
    def ident(url: str | None) -> str:
        return identity(make_settings(tmp_path, redis_url=url))

    assert ident("redis://Redis:6379") == ident("redis://redis/0") == ident("redis://:pw@redis:6379/0") \
        == "redis://redis:6379/0#rtcbot"
    assert ident("redis://redis/1") != ident("redis://redis/0") != ident("redis://other/0")
    assert "pw" not in ident("redis://:pw@redis/0") and ident(None).startswith("sqlite:/")
    assert ident(None) == identity(make_settings(tmp_path / ".." / tmp_path.name))  # one file, one queue


@pytest.mark.services
def test_one_redis_reached_by_two_names_is_one_queue(tmp_path: Path) -> None:
    """serve on 127.0.0.1, its worker on localhost: one Redis database, one queue id (kept in
    it), so the worker counts; after a Redis that restarted empty, the id is made again and the
    worker's next beat says the new one."""
    if not redis_ok():
        pytest.skip("the local Redis does not answer")
    rt = Runtime(make_settings(tmp_path, redis_url=REDIS_URL, worker_stale_s=5.0))
    other = make_settings(tmp_path / "w", redis_url=REDIS_URL.replace("127.0.0.1", "localhost"))
    worker_queue = make_queue(other)
    try:
        with serve(create_app(rt.settings, runtime=rt)) as url:
            presence = Presence(rt.store, rt.worker.database, lambda: heard_as(worker_queue, other))
            presence.beat()
            assert identity(other) != identity(rt.settings)  # two names…
            h = httpx.get(f"{url}/healthz")
            assert h.status_code == 200 and h.json()["workers"]["live"] == 1, h.text  # …one queue
            assert isinstance(rt.queue, RedisQueue)
            rt.queue.conn.delete(MARK_KEY)  # Redis restarted without its data
            assert httpx.get(f"{url}/healthz").status_code == 503  # serve made a new id; the beat is old
            presence.beat()
            assert httpx.get(f"{url}/healthz").status_code == 200
    finally:
        rt.store.close()


def test_queues_are_compared_by_their_id_when_both_have_one() -> None:
    assert same_queue("redis://a:6379/0#rtcbot id=1", "redis://b:6379/0#rtcbot id=1")
    assert not same_queue("redis://a:6379/0#rtcbot id=1", "redis://a:6379/0#rtcbot id=2")
    assert same_queue("sqlite:/x#rtcbot", "sqlite:/x#rtcbot") and not same_queue("sqlite:/x#rtcbot", "sqlite:/y#rtcbot")
    assert same_queue(None, "sqlite:/y#rtcbot")  # a worker from before heartbeats named queues


def test_a_worker_whose_beat_stopped_is_not_live(service: tuple[str, Runtime]) -> None:
    url, rt = service
    Presence(rt.store, rt.worker.database).beat()  # one beat, then killed (its row stays)
    assert httpx.get(f"{url}/healthz").status_code == 200
    time.sleep(STALE_S + 0.1)  # RTCBOT_WORKER_STALE_S
    h = httpx.get(f"{url}/healthz")
    assert h.status_code == 503 and h.json()["workers"]["live"] == 0


def test_a_job_queued_too_long_makes_it_unhealthy_and_the_gauges_say_so(service: tuple[str, Runtime]) -> None:
    url, rt = service
    presence = Presence(rt.store, rt.worker.database)
    presence.beat()
    before = time.time()
    assert deliver(url, "pull_request", payload("pull_request", "opened.payload.json")).status_code == 202
    m = scrape(url).text
    assert "rtcbot_workers_live 1.0" in m and "rtcbot_workers_ready 0.0" in m
    # just queued: no older than the time since the delivery was sent (not "under 1 s": the
    # delivery and the scrape may take longer than that on a loaded machine)
    assert 0.0 <= queue_age(m) <= time.time() - before
    time.sleep(QUEUE_AGE_S + 0.1)  # RTCBOT_HEALTH_MAX_QUEUE_AGE_S
    presence.mark_ready()
    h = httpx.get(f"{url}/healthz")
    assert h.status_code == 503, h.text
    [reason] = h.json()["reasons"]
    assert reason.startswith("the oldest queued job has waited") and "RTCBOT_HEALTH_MAX_QUEUE_AGE_S" in reason
    assert h.json()["oldest_queued_job_age_s"] >= QUEUE_AGE_S
    m = scrape(url).text
    assert "rtcbot_workers_ready 1.0" in m
    assert queue_age(m) >= QUEUE_AGE_S


def queue_age(metrics: str) -> float:
    """The oldest queued job's age, as /metrics says it."""
    return float(next(line.split()[1] for line in metrics.splitlines()
                      if line.startswith("rtcbot_oldest_queued_job_age_seconds ")))


def test_the_verdict_names_each_reason() -> None:
    assert verdict(2, None, stale_s=60, max_queue_age_s=600) == []
    assert verdict(1, 599.0, stale_s=60, max_queue_age_s=600) == []
    reasons = verdict(0, 601.0, stale_s=60, max_queue_age_s=600)
    assert [r.split(":")[0].split(" has")[0] for r in reasons] == ["no live worker", "the oldest queued job"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.app.outage"]


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    clock = Clock()
    outage = Outage("the Redis queue at REDIS_URL=redis://127.0.0.1:1/0", clock=clock)
    outage.ok()  # up: nothing said
    waits = [outage.failed(ConnectionError("Error 111 connecting to 127.0.0.1:1.\nsecond line")) for _ in range(9)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]  # backoff, capped
    assert outage.away
    clock.now += 12.34
    outage.ok()
    outage.ok()
    assert _lines(caplog) == [
        "the Redis queue at REDIS_URL=redis://127.0.0.1:1/0 is away (ConnectionError: Error 111 connecting to "
        "127.0.0.1:1.); trying again with backoff up to 30 s, quietly until it is back",
        "the Redis queue at REDIS_URL=redis://127.0.0.1:1/0 is back after 12.3 s (9 failed tries)"]
    assert all(r.exc_info is None for r in caplog.records)  # no traceback
    assert outage.failed(OSError("again")) == 0.5  # a new outage starts its backoff again


def test_many_threads_failing_at_once_say_it_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    outage = Outage("the database at DATABASE_URL=postgresql+psycopg://***@db/rtcbot")
    start, back = threading.Barrier(8), threading.Barrier(8)

    def fail_then_recover(_: Any = None) -> None:
        start.wait()
        for _ in range(50):
            outage.failed(TimeoutError("timed out"))
        back.wait()  # the database is back for every thread
        outage.ok()

    threads = [threading.Thread(target=fail_then_recover) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = _lines(caplog)
    assert len(lines) == 2 and " is away (TimeoutError: timed out)" in lines[0] and " is back after " in lines[1]


def test_metrics_answer_without_the_health_gauges_when_the_database_is_gone(tmp_path: Path) -> None:
    from bot.store.store import Store

    settings = make_settings(tmp_path)
    dead = Store("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1", create=False)
    with serve(create_app(settings, runtime=Runtime(settings, store=dead))) as url:
        m = scrape(url, timeout=30)
    assert m.status_code == 200 and "rtcbot_webhook_seconds" in m.text and "rtcbot_workers_live" not in m.text


def test_the_waiting_jobs_are_shown_per_installation_and_bounded(service: tuple[str, Runtime]) -> None:
    """12 installations with a queued job each: /healthz and /metrics name the 10 that waited
    longest, by id, and count the other 2 as "other" (the series stay bounded)."""
    url, rt = service
    base: dict[str, Any] = payload("pull_request", "opened.payload.json")
    for n in range(1, 13):
        p = {**base, "number": n, "installation": {**base["installation"], "id": 1000 + n},
             "pull_request": {**base["pull_request"], "number": n}}
        assert deliver(url, "pull_request", p, delivery=f"d-{n}").status_code == 202
    waiting = httpx.get(f"{url}/healthz").json()["waiting_by_installation"]
    assert [w["installation"] for w in waiting] == [*range(1001, 1011), "other"]
    assert [w["queued"] for w in waiting] == [1] * 10 + [2]
    assert waiting[0]["oldest_wait_s"] >= waiting[9]["oldest_wait_s"] >= 0
    m = scrape(url).text
    assert 'rtcbot_installation_queued_jobs{installation="1001"} 1.0' in m
    assert 'rtcbot_installation_queued_jobs{installation="other"} 2.0' in m
    assert 'installation="1011"' not in m
    assert len([ln for ln in m.splitlines() if ln.startswith("rtcbot_installation_oldest_queued_age_seconds{")]) == 11
