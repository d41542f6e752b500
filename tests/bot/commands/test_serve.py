"""`rtcbot serve` (gunicorn) and `rtcbot worker` as real processes."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bot.app.commands.serve import default_metrics_dir
from bot.store.versions import SCHEMA_VERSION
from tests.bot.app_support import METRICS_TOKEN, SECRET, scrape
from tests.fakes.github_server import sign
from tests.support import ROOT

RTCBOT = [sys.executable, "-m", "bot"]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"RTCBOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}, **extra)
    return env


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_serve_refuses_to_start_without_a_secret(tmp_path: Path) -> None:
    r = subprocess.run([*RTCBOT, "serve", "--port", str(_port())], env=_env(tmp_path), cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "RTCBOT_WEBHOOK_SECRET" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_worker_refuses_to_start_without_an_app_id(tmp_path: Path) -> None:
    r = subprocess.run([*RTCBOT, "worker"], env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "RTCBOT_APP_ID" in r.stderr and "Traceback" not in r.stderr


@dataclass
class Served:
    url: str
    metrics: Path  # the workers' metric files
    data: Path  # RTCBOT_DATA_DIR
    stale: Path  # a file left in it before the start


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`rtcbot serve` with two gunicorn workers (started once for this module's tests)."""
    tmp_path = tmp_path_factory.mktemp("serve")
    port = _port()
    metrics = default_metrics_dir(tmp_path / "data", port)  # in memory, not on the data disk
    assert not metrics.is_relative_to(tmp_path)
    metrics.mkdir(parents=True)
    stale = metrics / "counter_1.db"
    stale.write_bytes(b"left by an earlier run")
    p = subprocess.Popen([*RTCBOT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
                         env=_env(tmp_path, RTCBOT_WEBHOOK_SECRET=SECRET, RTCBOT_METRICS_TOKEN=METRICS_TOKEN), cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert p.poll() is None, p.stdout.read().decode() if p.stdout else ""
                assert time.monotonic() < deadline, "serve did not come up"
                time.sleep(0.2)
        yield Served(url, metrics, tmp_path / "data", stale)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(60)
    assert not metrics.exists()  # its folder in memory went with it


def _is_private_socket(path: Path) -> bool:
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_mode & 0o777 == 0o600


def _ping(url: str, delivery: str, secret: str = SECRET) -> httpx.Response:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
    return httpx.post(f"{url}/webhook", content=body, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body, secret)})


@pytest.mark.slow
def test_serve_answers_over_http_under_gunicorn(served: Served) -> None:
    url = served.url
    h = httpx.get(f"{url}/healthz", timeout=5)  # no worker runs here: unhealthy, and says why
    assert h.status_code == 503 and h.json()["database"] == "ok" and h.json()["workers"]["live"] == 0
    r = _ping(url, "p1")
    assert r.status_code == 200 and r.json()["message"] == "pong"
    bad = _ping(url, "p2", "wrong")
    assert bad.status_code == 401
    assert "gunicorn" in (r.headers.get("server", "") + h.headers.get("server", "")).lower()
    # gunicorn's control socket is this instance's own, in its data folder, never the user's one
    port = url.rsplit(":", 1)[1]
    ctl = served.data / f"serve-{port}.ctl"
    # gunicorn closes and remakes it around each fork of a worker (then chmods it): wait for it to settle
    deadline = time.monotonic() + 20
    while not _is_private_socket(ctl):
        assert time.monotonic() < deadline, f"no control socket of mode 0600 at {ctl}"
        time.sleep(0.1)


def test_a_control_socket_per_instance_or_none(tmp_path: Path) -> None:
    from bot.app.commands.serve import control_socket

    assert control_socket(tmp_path, 8000)["control_socket"] != control_socket(tmp_path, 8001)["control_socket"]
    assert control_socket(tmp_path / ("d" * 120), 8000) == {"control_socket_disable": True}


def _scrape(url: str) -> dict[str, float]:
    """The webhook counters of one /metrics answer, by their labels."""
    out: dict[str, float] = {}
    for line in scrape(url, timeout=10).text.splitlines():
        if line.startswith(("rtcbot_webhook_requests_total{", "rtcbot_webhook_seconds_count")):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


@pytest.mark.slow
def test_metrics_agree_across_gunicorn_workers(served: Served) -> None:
    url = served.url
    before = _scrape(url)
    assert all(_scrape(url) == before for _ in range(10))
    for i in range(30):  # a new connection each: gunicorn's workers share them out
        r = _ping(url, f"m{i}", SECRET if i % 3 else "wrong")
        assert r.status_code == (200 if i % 3 else 401)
    ok, refused = 'rtcbot_webhook_requests_total{event="ping",status="200"}', \
        'rtcbot_webhook_requests_total{event="-",status="401"}'
    want = {ok: before.get(ok, 0) + 20, refused: before.get(refused, 0) + 10,
            "rtcbot_webhook_seconds_count": before.get("rtcbot_webhook_seconds_count", 0) + 20}
    for _ in range(20):  # whichever worker answers: every worker's counts, summed
        assert _scrape(url) == want
    assert not served.stale.exists()  # an earlier run's files were cleared at start
    pids = {f.stem.rsplit("_", 1)[-1] for f in served.metrics.glob("*.db")}
    assert len(pids) >= 3, pids  # files per process: the start-up check and both workers


ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"  # ISO 8601 with the zone


def _serve_lines(tmp_path: Path, fmt: str) -> tuple[list[str], str]:
    """(stderr's lines, stdout) of `rtcbot serve` with RTCBOT_LOG_FORMAT=`fmt`, from its start
    to its stop, after a /healthz and a ping delivery."""
    port = _port()
    err, out = tmp_path / f"err-{fmt}", tmp_path / f"out-{fmt}"
    with err.open("wb") as e, out.open("wb") as o:
        p = subprocess.Popen([*RTCBOT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
                             env=_env(tmp_path, RTCBOT_WEBHOOK_SECRET=SECRET, RTCBOT_LOG_FORMAT=fmt), cwd=ROOT,
                             stdout=o, stderr=e, start_new_session=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 90
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert p.poll() is None and time.monotonic() < deadline, err.read_text()
                time.sleep(0.2)
        assert _ping(url, f"guid-{fmt}").status_code == 200
    finally:
        p.send_signal(signal.SIGINT)  # a quick stop; a worker that does not stop in 5 s is killed
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(60)
    return err.read_text().splitlines(), out.read_text()


@pytest.mark.slow
def test_gunicorns_lines_and_rtcbots_have_one_json_format(tmp_path: Path) -> None:
    lines, out = _serve_lines(tmp_path, "json")
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert out == "" and all(re.fullmatch(ISO, r["time"]) for r in records), lines
    loggers = {r["logger"] for r in records}
    assert {"gunicorn.error", "gunicorn.access", "bot.app.web", "bot.app.commands.serve"} <= loggers, loggers
    [hook] = [r for r in records if r["logger"] == "bot.app.web"]
    assert hook["delivery"] == "guid-json" and hook["message"] == "ping delivery answered 200: pong"
    access = [r["message"] for r in records if r["logger"] == "gunicorn.access"]
    assert any('"GET /healthz HTTP/1.1"' in m for m in access), access
    assert not any("/webhook" in m for m in access), access  # the webhook's own line says it all


@pytest.mark.slow
def test_gunicorns_lines_and_rtcbots_have_one_text_format(tmp_path: Path) -> None:
    lines, out = _serve_lines(tmp_path, "text")
    assert out == "" and lines, lines
    assert all(re.match(rf"{ISO} (INFO|WARNING|ERROR|DEBUG) \S+: ", line) for line in lines), lines
    assert any(re.search(r" gunicorn\.error: Booting worker", line) for line in lines), lines
    # its start line says the database's schema version (bot/store/versions.py)
    assert any(re.search(rf" bot\.app\.commands\.serve: webhook service on http://\S+ \(database sqlite, "
                         rf"schema {SCHEMA_VERSION}, queue sqlite\)$", line) for line in lines), lines
    assert any(re.search(r" bot\.app\.web: ping delivery answered 200: pong \[delivery=guid-text t=\d+\.\d\ds\]$", line)
               for line in lines), lines
