"""`rtcbot serve` (gunicorn) and `rtcbot worker` as real processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.bot.app_support import SECRET
from tests.fakes.github_server import sign
from tests.support import ROOT

RTCBOT = [sys.executable, "-m", "bot.cli"]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"RTCBOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}, **extra)
    return env


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_refuses_to_start_without_a_secret(tmp_path: Path) -> None:
    r = subprocess.run([*RTCBOT, "serve", "--port", str(_port())], env=_env(tmp_path), cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "RTCBOT_WEBHOOK_SECRET" in r.stderr and "Traceback" not in r.stderr


def test_worker_refuses_to_start_without_an_app_id(tmp_path: Path) -> None:
    r = subprocess.run([*RTCBOT, "worker"], env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "RTCBOT_APP_ID" in r.stderr and "Traceback" not in r.stderr


def test_serve_answers_over_http_under_gunicorn(tmp_path: Path) -> None:
    port = _port()
    p = subprocess.Popen([*RTCBOT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                         env=_env(tmp_path, RTCBOT_WEBHOOK_SECRET=SECRET), cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                h = httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert p.poll() is None, p.stdout.read().decode() if p.stdout else ""
                assert time.monotonic() < deadline, "serve did not come up"
                time.sleep(0.2)
        assert h.status_code == 200 and h.json()["database"] == "ok"
        body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
        r = httpx.post(f"{url}/webhook", content=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": "p1",
            "X-Hub-Signature-256": sign(body, SECRET)})
        assert r.status_code == 200 and r.json()["message"] == "pong"
        bad = httpx.post(f"{url}/webhook", content=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": "p2",
            "X-Hub-Signature-256": sign(body, "wrong")})
        assert bad.status_code == 401
        assert "gunicorn" in (r.headers.get("server", "") + h.headers.get("server", "")).lower()
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(30)
