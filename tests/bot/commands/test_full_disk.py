"""A full data disk, for real: `rtcbot serve` with RTCBOT_DATA_DIR on a 16 MiB tmpfs (mounted
in a user and mount namespace of its own, `unshare`), the disk filled, then freed. A delivery
that cannot be recorded gets 503 (GitHub redelivers it), never a dropped connection; /healthz
says the disk; the process lives on (its metric files are not on the data disk:
bot/app/commands/serve.py `metrics_dir`); once there is room, the same delivery is accepted."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest

from tests.bot.app_support import METRICS_TOKEN, SECRET, scrape
from tests.bot.commands.test_serve import RTCBOT, _env, _port
from tests.fakes.github_server import sign
from tests.support import ROOT, require

# In the namespace: the tmpfs on the data folder, serve in the background (its lines to a file
# off that disk), then "fill" and "free" read from stdin, each acknowledged on stdout.
SCRIPT = r"""
set -e
mount -t tmpfs -o size=16m,mode=0700 tmpfs "$DATA"
"$@" >"$LOG" 2>&1 &
serve=$!
echo mounted
while read -r what; do
  case "$what" in
    fill) dd if=/dev/zero of="$DATA/filler" bs=64k 2>/dev/null || true; echo filled ;;
    free) rm -f "$DATA/filler"; echo freed ;;
  esac
done
kill -TERM "$serve"
wait "$serve" || true
"""


UNSHARE = ["unshare", "--user", "--map-root-user", "--mount"]


def unshare_command() -> list[str] | None:
    """How to start a process in a user and mount namespace of its own that may mount a tmpfs:
    unshare as is, or through `sudo -n -E` where unprivileged user namespaces are restricted
    (Ubuntu 24.04's AppArmor, GitHub's runners); None when neither works."""
    if shutil.which("unshare") is None:
        return None
    for prefix in ([], ["sudo", "-n", "-E"]):
        if prefix and shutil.which("sudo") is None:
            continue
        r = subprocess.run([*prefix, *UNSHARE, "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
                           capture_output=True, timeout=30)
        if r.returncode == 0:
            return [*prefix, *UNSHARE]
    return None


@dataclass
class Disk:
    url: str
    shell: subprocess.Popen[str]
    log: Path

    def say(self, what: str) -> None:
        """Fill or free the data disk (in the namespace) and wait for it to be done."""
        stdin, stdout = self.shell.stdin, self.shell.stdout
        assert stdin is not None and stdout is not None
        stdin.write(what + "\n")
        stdin.flush()
        assert _line(stdout) == {"fill": "filled", "free": "freed"}[what]


def _line(stream: IO[str]) -> str:
    return stream.readline().strip()


def _pids(run: Path) -> set[str]:
    """The processes that made the webhook app: each has its metric files (start-up check, workers)."""
    return {f.stem.rsplit("_", 1)[-1] for f in run.glob("metrics*/*.db")}


@pytest.fixture
def on_a_tiny_disk(tmp_path: Path) -> Iterator[Disk]:
    unshare = unshare_command()
    require(unshare, "cannot mount a tmpfs in a user and mount namespace here (unshare, or sudo -n unshare)")
    assert unshare is not None
    port, data, log = _port(), tmp_path / "data", tmp_path / "serve.log"
    data.mkdir()
    (tmp_path / "run").mkdir(mode=0o700)
    env = _env(tmp_path, RTCBOT_WEBHOOK_SECRET=SECRET, RTCBOT_METRICS_TOKEN=METRICS_TOKEN,
               RTCBOT_HEALTH_MIN_FREE_MB="1", RUNTIME_DIRECTORY=str(tmp_path / "run"), DATA=str(data), LOG=str(log))
    shell = subprocess.Popen(
        [*unshare, "sh", "-c", SCRIPT, "sh",
         *RTCBOT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
        env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert shell.stdout is not None and _line(shell.stdout) == "mounted"
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while len(_pids(tmp_path / "run")) < 3:  # both workers made their app (a worker that boots
            assert shell.poll() is None, log.read_text()  # on a full disk cannot open its queue)
            assert time.monotonic() < deadline, f"serve did not come up: {log.read_text()}"
            time.sleep(0.2)
        assert httpx.get(f"{url}/livez", timeout=30).status_code == 200
        yield Disk(url, shell, log)
    finally:
        if shell.stdin:
            shell.stdin.close()  # serve is stopped, the namespace and its tmpfs go
        shell.wait(60)


def ping(url: str, delivery: str) -> httpx.Response:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
    return httpx.post(f"{url}/webhook", content=body, timeout=30, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body, SECRET)})


@pytest.mark.slow
def test_a_full_data_disk_is_a_503_not_a_crash_and_room_again_takes_the_redelivery(on_a_tiny_disk: Disk) -> None:
    disk = on_a_tiny_disk
    assert ping(disk.url, str(uuid.uuid4())).status_code == 200
    disk.say("fill")
    refused = [str(uuid.uuid4()) for _ in range(10)]  # several: gunicorn's two workers each take some
    for delivery in refused:
        r = ping(disk.url, delivery)  # a dropped connection would raise here
        assert r.status_code == 503, r.text
        assert r.json()["message"] == "could not record the delivery; redeliver it"
    h = httpx.get(f"{disk.url}/healthz", timeout=30)
    assert h.status_code == 503
    assert any("data disk" in why and "RTCBOT_HEALTH_MIN_FREE_MB" in why for why in h.json()["reasons"]), h.text
    m = scrape(disk.url, timeout=30).text
    assert 'rtcbot_webhook_requests_total{event="ping",status="503"} 10.0' in m, m
    assert "rtcbot_data_disk_free_bytes 0.0" in m
    assert httpx.get(f"{disk.url}/livez", timeout=30).status_code == 200 and disk.shell.poll() is None

    disk.say("free")
    for delivery in refused:  # GitHub's redeliveries, now recorded
        assert ping(disk.url, delivery).status_code == 200
    assert "data disk" not in httpx.get(f"{disk.url}/healthz", timeout=30).text
    lines = disk.log.read_text()
    assert "SIGBUS" not in lines and "was sent" not in lines and "Worker exiting" not in lines, lines


@pytest.mark.slow
def test_a_metric_that_cannot_be_written_does_not_fail_the_delivery(tmp_path: Path) -> None:
    """The metric files' folder gone under a running serve (a cleaner emptied /dev/shm): a
    webhook answer that cannot be counted is still answered."""
    port, metrics = _port(), tmp_path / "metrics"
    env = _env(tmp_path, RTCBOT_WEBHOOK_SECRET=SECRET, PROMETHEUS_MULTIPROC_DIR=str(metrics))
    p = subprocess.Popen([*RTCBOT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                         env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while len(_pids(tmp_path)) < 2:  # the start-up check and the worker made their app
            assert p.poll() is None and time.monotonic() < deadline, "serve did not come up"
            time.sleep(0.2)
        shutil.rmtree(metrics)
        r = ping(f"http://127.0.0.1:{port}", str(uuid.uuid4()))
        assert r.status_code == 200 and r.json()["message"] == "pong", r.text
    finally:
        p.terminate()
        out, _ = p.communicate(timeout=60)
    assert "metrics: could not count a webhook answer" in out, out
