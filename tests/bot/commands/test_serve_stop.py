"""`rtcbot serve` stops promptly on SIGTERM (its unit's KillSignal): an idle serve, and one holding
an idle kept-alive connection (Prometheus keeps its scrape connection open between scrapes, a
reverse proxy its upstream connections), is gone within STOP_S, where gunicorn's gevent worker
waited for the kept-alive connection's `keepalive` (10 s) to run out; and a request in flight at
the signal is still answered (bot/app/serve_worker.py)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from bot.app.commands.serve import KEEPALIVE_S
from tests.bot.app_support import METRICS_TOKEN, SECRET
from tests.bot.commands.test_serve import RTCBOT, _env, _port
from tests.support import ROOT

STOP_S = 5.0  # gunicorn's worker notices the signal within 1 s; the master exits 0.1 s after it
assert STOP_S < KEEPALIVE_S  # what a stop took before: the kept-alive connection's wait


def start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    log = (tmp_path / "serve.log").open("wb")
    p = subprocess.Popen([*RTCBOT, "serve", "--port", str(port), "--workers", "2"], cwd=ROOT, stdout=log,
                         stderr=subprocess.STDOUT,
                         env=_env(tmp_path, RTCBOT_WEBHOOK_SECRET=SECRET, RTCBOT_METRICS_TOKEN=METRICS_TOKEN))
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"{url}/livez", timeout=5)
            return p, url
        except httpx.TransportError:
            assert p.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.2)


def read_answer(conn: socket.socket) -> bytes:
    """One HTTP/1.1 answer off `conn`: its head and its Content-Length of body (less if it closes)."""
    data = b""
    while True:
        head, sep, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if sep and len(body) >= (int(length.group(1)) if length else 0):
            return data
        chunk = conn.recv(4096)
        if not chunk:
            return data
        data += chunk


def stop_s(p: subprocess.Popen[bytes]) -> float:
    """Seconds from SIGTERM to the master's exit (its workers are gone before it)."""
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        assert p.wait(60) == 0
    finally:
        if p.poll() is None:
            p.kill()
    return time.monotonic() - t0


@pytest.mark.slow
def test_an_idle_serve_stops_promptly(tmp_path: Path) -> None:
    p, _ = start(tmp_path)
    took = stop_s(p)
    print(f"idle serve stopped {took:.2f} s after SIGTERM")
    assert took < STOP_S


@pytest.mark.slow
def test_a_kept_alive_idle_connection_does_not_hold_the_stop(tmp_path: Path) -> None:
    p, url = start(tmp_path)
    token = {"Authorization": f"Bearer {METRICS_TOKEN}"}
    with httpx.Client() as scraper:  # Prometheus' way: one connection, kept between scrapes
        assert scraper.get(f"{url}/metrics", headers=token).status_code == 200
        with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as idle:  # another one
            idle.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_answer(idle).startswith(b"HTTP/1.1 200")
            took = stop_s(p)
            assert idle.recv(1) == b""  # closed by serve
    print(f"serve holding idle kept-alive connections stopped {took:.2f} s after SIGTERM")
    assert took < STOP_S


@pytest.mark.slow
def test_a_request_in_flight_at_the_stop_is_answered(tmp_path: Path) -> None:
    """A client that sent half of its request's headers before the signal and the rest after it
    is answered: only connections with nothing of a next request are closed."""
    p, url = start(tmp_path)
    answer: list[bytes] = []
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as conn:
        conn.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")  # a first request: the connection is kept
        assert read_answer(conn).startswith(b"HTTP/1.1 200")
        conn.sendall(b"GET /livez HTTP/1.1\r\n")  # the next one, its headers unfinished

        def finish() -> None:
            time.sleep(1.5)
            conn.sendall(b"Host: x\r\n\r\n")
            answer.append(read_answer(conn))

        t = threading.Thread(target=finish)
        t.start()
        took = stop_s(p)
        t.join(30)
    assert answer and answer[0].startswith(b"HTTP/1.1 200"), answer
    assert b"connection: close" in answer[0].lower()
    print(f"serve answered the request in flight and stopped {took:.2f} s after SIGTERM")
