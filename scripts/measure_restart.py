"""Measure what docs/deploy.md ("Short restarts") quotes: how long `rtcbot serve` takes from a
cold start to its first answer, and what a reload (SIGHUP) costs while deliveries keep coming —
the longest a delivery waited, how many were refused or dropped, and how long until the old
workers were gone. Runs serve as the unit does (gevent, 2 workers, SQLite in a temporary data
directory, `--env-file`), a thread sending signed deliveries (`ping`) without a pause.

    .venv/bin/python scripts/measure_restart.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.github_server import sign  # noqa: E402

SECRET = "measure-restart-webhook-secret-0123456789"
BODY = json.dumps({"zen": "Design for failure.", "hook_id": 1}).encode()


def port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(data: Path, env_file: Path, p: int, log: Path) -> tuple[subprocess.Popen[bytes], float]:
    """serve started; (its process, seconds to the first answer of /livez)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(RTCBOT_DATA_DIR=str(data), PYTHONPATH=str(ROOT))
    t0 = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--port", str(p), "--workers", "2",
                                 "--env-file", str(env_file)], env=env, stdout=out, stderr=subprocess.STDOUT)
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{p}/livez", timeout=60).status_code == 200:
                return proc, time.monotonic() - t0
        except httpx.HTTPError:
            time.sleep(0.05)


def reload_under_load(proc: subprocess.Popen[bytes], p: int, log: Path) -> dict[str, float]:
    """SIGHUP while a thread sends deliveries: the longest wait, refusals, the old workers' end."""
    waits: list[tuple[float, int | str]] = []
    stop = threading.Event()

    def send() -> None:
        with httpx.Client() as c:
            while not stop.is_set():
                t = time.monotonic()
                try:
                    status: int | str = c.post(f"http://127.0.0.1:{p}/webhook", content=BODY, timeout=120, headers={
                        "Content-Type": "application/json", "X-GitHub-Event": "ping",
                        "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": sign(BODY, SECRET)}).status_code
                except httpx.HTTPError as e:
                    status = type(e).__name__
                waits.append((time.monotonic() - t, status))

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(2)
    exits = log.read_text().count("Worker exiting")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGHUP)
    while log.read_text().count("Worker exiting") < exits + 2:
        time.sleep(0.05)
    replaced = time.monotonic() - t0
    time.sleep(2)
    stop.set()
    sender.join()
    return {"deliveries": len(waits), "refused_or_dropped": sum(s != 200 for _, s in waits),
            "longest_wait_s": max(w for w, _ in waits), "workers_replaced_s": replaced}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    colds, reloads = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            env_file = Path(tmp) / "rtcbot.env"
            env_file.write_text(f"RTCBOT_WEBHOOK_SECRET={SECRET}\n")
            p, log = port(), Path(tmp) / "serve.log"
            proc, cold = start(Path(tmp) / "data", env_file, p, log)
            try:
                colds.append(cold)
                reloads.append(reload_under_load(proc, p, log))
            finally:
                proc.terminate()
                proc.wait(timeout=60)
    print(f"cold start to the first answer: median {statistics.median(colds):.1f} s "
          f"({', '.join(f'{c:.1f}' for c in colds)})")
    for r in reloads:
        print(f"reload under load: {r['deliveries']:.0f} deliveries, {r['refused_or_dropped']:.0f} refused or dropped, "
              f"longest wait {r['longest_wait_s']:.2f} s, old workers gone after {r['workers_replaced_s']:.2f} s")
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
