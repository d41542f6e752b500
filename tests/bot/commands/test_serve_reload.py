"""`rtcbot serve` reloads on SIGHUP under load: a thread sends signed deliveries without a pause
while the env file changes (a new webhook secret, the old one kept as previous) and the master
gets SIGHUP; not one delivery is refused or dropped, the web workers are replaced, and the new
setting is in effect (a delivery signed with the new secret, refused before, is accepted)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.bot.commands.test_serve import RTCBOT, _env, _port
from tests.fakes.github_server import sign
from tests.support import ROOT

OLD, NEW = "the-old-webhook-secret-0123456789", "the-new-webhook-secret-9876543210"
BODY = json.dumps({"zen": "Design for failure.", "hook_id": 1}).encode()


def ping(client: httpx.Client, url: str, secret: str) -> int:
    return client.post(f"{url}/webhook", content=BODY, timeout=60, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(BODY, secret)}).status_code


def wait_for(cond: object, what: str, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if callable(cond) and cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_a_reload_under_load_refuses_no_delivery_and_takes_the_new_settings(tmp_path: Path) -> None:
    env_file = tmp_path / "rtcbot.env"
    env_file.write_text(f"RTCBOT_WEBHOOK_SECRET={OLD}\n")
    port, log = _port(), tmp_path / "serve.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = subprocess.Popen([*RTCBOT, "serve", "--port", str(port), "--workers", "2", "--env-file", str(env_file)],
                                env=_env(tmp_path), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    answers: list[int | str] = []
    stop = threading.Event()

    def send() -> None:
        with httpx.Client() as c:
            while not stop.is_set():
                try:
                    answers.append(ping(c, url, OLD))
                except httpx.HTTPError as e:
                    answers.append(type(e).__name__)

    try:
        wait_for(lambda: _answers(url), "serve to answer")
        with httpx.Client() as c:
            assert ping(c, url, NEW) == 401  # not the secret yet
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        wait_for(lambda: len(answers) >= 20, "deliveries before the reload")
        env_file.write_text(f"RTCBOT_WEBHOOK_SECRET={NEW}\nRTCBOT_WEBHOOK_SECRET_PREVIOUS={OLD}\n")
        before = len(answers)
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: log.read_text().count("Worker exiting") >= 2, "the old workers to stop")
        wait_for(lambda: len(answers) >= before + 50, "deliveries after the reload")
        stop.set()
        sender.join(timeout=90)
        with httpx.Client() as c:
            assert ping(c, url, NEW) == 200  # the new setting is in effect
    finally:
        stop.set()
        proc.terminate()
        proc.wait(timeout=60)
    text = log.read_text()
    assert "reload: settings read again" in text, text[-3000:]
    assert answers.count(200) == len(answers), [a for a in answers if a != 200][:10]
    assert "Traceback" not in text


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/livez", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.parametrize(("args", "patched"), [
    (["serve"], True), (["-v", "serve", "--port", "8000"], True), (["serve", "--worker-class", "gevent"], True),
    (["serve", "--worker-class", "gthread"], False), (["serve", "--worker-class=gthread"], False),
    (["worker"], False), (["review", "serve"], False), ([], False), (["--verbose", "serve"], True)])
def test_only_serve_on_gevent_is_patched_first(args: list[str], patched: bool) -> None:
    from bot.shell.gevent_first import serve_uses_gevent

    assert serve_uses_gevent(args) is patched


def test_a_reload_reads_the_env_file_again_and_keeps_the_settings_when_the_new_ones_are_wrong(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.app.commands.serve import apply_env_file, reread_settings

    # apply_env_file writes os.environ itself: each name it may set is put back after the test
    # (setenv records the value to restore, even none; RTCBOT_MAX_BODY_BYTES=lots leaked before)
    for name in ("RTCBOT_WEBHOOK_SECRET", "RTCBOT_WEBHOOK_SECRET_PREVIOUS", "DATABASE_URL", "REDIS_URL",
                 "RTCBOT_MAX_BODY_BYTES"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("RTCBOT_DATA_DIR", str(tmp_path / "data"))
    env_file, read = tmp_path / "rtcbot.env", set[str]()
    env_file.write_text(f"RTCBOT_WEBHOOK_SECRET={NEW}\nRTCBOT_WEBHOOK_SECRET_PREVIOUS={OLD}\n")
    apply_env_file(env_file, read)
    from bot.app.service_checks import service_settings

    first = service_settings(webhooks=True)
    assert (first.webhook_secret, first.webhook_secret_previous) == (NEW, OLD)
    env_file.write_text(f"RTCBOT_WEBHOOK_SECRET={NEW}\n")  # the previous one dropped: unset
    second = reread_settings(env_file, first, read)
    assert (second.webhook_secret, second.webhook_secret_previous) == (NEW, None)
    env_file.write_text("RTCBOT_WEBHOOK_SECRET=\nRTCBOT_MAX_BODY_BYTES=lots\n")  # wrong: kept as they were
    assert reread_settings(env_file, second, read) is second
    env_file.unlink()
    assert reread_settings(env_file, second, read) is second
