"""The webhook service as the README starts it (`rtcbot serve`, a real subprocess on loopback)
under hostile clients.

Attacks covered:
- slow clients (slowloris): 300 connections that send a request a few bytes at a time must not
  stop /healthz and a signed /webhook from answering;
- a signed JSON document nested 100,000 deep (Python's json would recurse past its limit): 400;
- a chunked body over the 25 MB limit (no Content-Length to check first): 413, not 401;
- malformed JSON and bodies that are not text: 400, one line, never a 500;
- a request whose headers come seconds after its connect (a loaded machine): answered;
- /static/... serving files from the service's working directory: 404.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from analyzers.tools.programs import BoundProcess, popen_bound, tool_env
from bot.app.commands.serve import KEEPALIVE_S
from tests.fakes.github_server import sign

SECRET = "webhook-secret-for-tests"
SLOW_CLIENTS = 300
ANSWER_WITHIN_S = 3.0
STALL_S = 3.0  # over gunicorn's default keep-alive (2 s), under the service's (KEEPALIVE_S)
NO_WORKER = 503  # /healthz of a service with no `rtcbot worker` running: it answers, unhealthy
# every test here is served by the module's `rtcbot serve` (a new rtcbot process: seconds of CPU)
pytestmark = pytest.mark.slow


@dataclass
class Service:
    url: str
    port: int
    proc: BoundProcess
    log: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    home = tmp_path_factory.mktemp("serve")
    (home / "static").mkdir()
    (home / "static" / "secret.txt").write_text("a file in the service's working directory\n")
    port = free_port()
    log = home / "serve.log"
    exe = str(Path(sys.executable).parent / "rtcbot")
    env = tool_env(home, {"RTCBOT_WEBHOOK_SECRET": SECRET, "RTCBOT_DATA_DIR": str(home / "data")})
    with log.open("wb") as out:
        proc = popen_bound([exe, "serve", "--host", "127.0.0.1", "--port", str(port)], cwd=home, env=env,
                           stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"rtcbot serve exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == NO_WORKER:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"rtcbot serve did not answer /healthz in 90 s: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield Service(url, port, proc, log)
    finally:
        proc.release()
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def signed_post(url: str, body: bytes, event: str = "ping", *, timeout: float = 10.0,
                headers: dict[str, str] | None = None) -> httpx.Response:
    h = {"Content-Type": "application/json", "X-GitHub-Event": event,
         "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": sign(body, SECRET)}
    h.update(headers or {})
    return httpx.post(f"{url}/webhook", content=body, headers=h, timeout=timeout)


def ping_body() -> bytes:
    return json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()


def one_line_message(r: httpx.Response) -> str:
    message = str(r.json()["message"])
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.slow
def test_slow_clients_do_not_stop_health_checks_or_deliveries(service: Service) -> None:
    socks: list[socket.socket] = []
    try:
        for i in range(SLOW_CLIENTS):
            s = socket.create_connection(("127.0.0.1", service.port), timeout=5)
            s.sendall(b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never finished
            socks.append(s)
            if i % 50 == 49:
                time.sleep(0.05)
        timings: list[tuple[str, int, float]] = []
        for round_ in range(3):  # the slow clients keep trickling while we ask
            for n, s in enumerate(socks):
                s.sendall(f"X-Slow-{round_}: {n}\r\n".encode())
            t0 = time.perf_counter()
            h = httpx.get(f"{service.url}/healthz", timeout=ANSWER_WITHIN_S * 2)
            timings.append(("healthz", h.status_code, time.perf_counter() - t0))
            t0 = time.perf_counter()
            w = signed_post(service.url, ping_body(), timeout=ANSWER_WITHIN_S * 2)
            timings.append(("webhook", w.status_code, time.perf_counter() - t0))
        assert [(what, status) for what, status, _ in timings] == [("healthz", NO_WORKER), ("webhook", 200)] * 3
        slowest = max(t for _, _, t in timings)
        assert slowest < ANSWER_WITHIN_S, timings
        print(f"\n{SLOW_CLIENTS} slow clients: slowest answer {slowest * 1000:.0f} ms")
    finally:
        for s in socks:
            s.close()


def test_signed_deeply_nested_json_is_400(service: Service) -> None:
    depth = 100_000
    body = b'{"a": ' + b"[" * depth + b"]" * depth + b"}"
    r = signed_post(service.url, body)
    assert r.status_code == 400, r.text
    assert "nested" in one_line_message(r)
    assert httpx.get(f"{service.url}/healthz", timeout=10).status_code == NO_WORKER


def test_chunked_body_over_the_limit_is_413(service: Service) -> None:
    chunk = b"a" * (1024 * 1024)

    def body() -> Iterator[bytes]:
        yield b'{"x": "'
        for _ in range(26):
            yield chunk
        yield b'"}'

    headers = {"Content-Type": "application/json", "X-GitHub-Event": "ping",
               "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": "sha256=" + "0" * 64}
    with httpx.Client(timeout=60) as client:
        r = client.post(f"{service.url}/webhook", content=body(), headers=headers)
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert r.status_code == 413, r.text
    one_line_message(r)


def test_malformed_bodies_are_400_never_500(service: Service) -> None:
    for body in (b"{not json", b'{"a": [1, 2}', b"\xff\xfe\x00garbage", b'"a string"', b""):
        r = signed_post(service.url, body)
        assert r.status_code == 400, (body, r.status_code, r.text)
        one_line_message(r)


@pytest.mark.slow  # waits out gunicorn's default keep-alive window
def test_a_request_sent_seconds_after_its_connect_is_answered(service: Service) -> None:
    """A client (or the service) not scheduled for seconds between its connect and its headers,
    as on a loaded machine: gunicorn's gevent worker closed such a connection with no answer
    after its 2 s default `keepalive` (httpx: "Server disconnected without sending a response",
    in test_malformed_bodies_are_400_never_500). The service waits KEEPALIVE_S."""
    body = ping_body()
    conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=10)
    try:
        conn.connect()
        assert 2.0 < STALL_S < KEEPALIVE_S
        time.sleep(STALL_S)
        conn.request("POST", "/webhook", body, {
            "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(body, SECRET)})
        resp = conn.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["message"] == "pong"
    finally:
        conn.close()


def test_no_static_files(service: Service) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=10)
    try:
        for path in ("/static/secret.txt", "/static/../serve.log"):
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            assert resp.status == 404, (path, resp.status)
            assert b"working directory" not in body
    finally:
        conn.close()
