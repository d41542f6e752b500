"""A refused delivery leaves a trace: one log line with its delivery id, its event, the status
and the reason, never the body (bot/app/refusals.py); /metrics' own refusals are not counted as
webhook requests."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.app.refusals import shown
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.core.logs import configure
from bot.core.settings import LogSettings
from tests.bot.app_support import deliver, make_settings, scrape, serve
from tests.fakes.github_server import sign

BODY_MARK = "body-text-that-must-never-be-logged"
MAX_BODY = 4096


@pytest.fixture
def app_log(tmp_path: Path) -> Iterator[tuple[str, io.StringIO]]:
    """The webhook app over HTTP (bodies over 4 KiB refused) and its log, as JSON lines."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    buf = io.StringIO()
    configure(LogSettings(log_format="json"), default=logging.INFO, stream=buf)
    rt = Runtime(make_settings(tmp_path, max_body_bytes=MAX_BODY))
    try:
        with serve(create_app(rt.settings, runtime=rt)) as url:
            yield url, buf
    finally:
        rt.store.close()
        root.handlers[:] = handlers
        root.setLevel(level)


def refusals(buf: io.StringIO) -> list[dict[str, str]]:
    lines = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    return [ln for ln in lines if ln["message"].startswith("refused delivery")]


def signed(body: bytes, **headers: str) -> dict[str, str]:
    return {"X-Hub-Signature-256": sign(body, "It's a Secret to Everybody"), **headers}


@pytest.mark.parametrize(("status", "reason", "make"), [
    (401, "missing or wrong X-Hub-Signature-256",
     lambda body: {"X-Hub-Signature-256": sign(body, "the secret GitHub was given")}),
    (400, "malformed body", lambda body: signed(b"{" + body)),
    (413, "payload over 4,096 bytes", lambda body: signed(body * 200)),
    (415, "expected a JSON body", lambda body: signed(body, **{"Content-Type": "text/plain"})),
])
def test_each_refused_delivery_is_one_line_with_its_id_event_status_and_reason(
        app_log: tuple[str, io.StringIO], status: int, reason: str, make: object) -> None:
    url, buf = app_log
    delivery = str(uuid.uuid4())
    body = json.dumps({"zen": BODY_MARK}).encode()
    headers = make(body)  # type: ignore[operator]
    raw = b"{" + body if status == 400 else body * 200 if status == 413 else body
    r = deliver(url, "ping", None, body=raw, delivery=delivery, headers=headers)
    assert r.status_code == status, r.text
    [line] = refusals(buf)
    assert line["level"] == "warning" and line["delivery"] == delivery
    assert f"refused delivery {delivery} (event ping): {status} {reason}" in line["message"], line
    assert BODY_MARK not in buf.getvalue()


def test_an_accepted_delivery_is_no_refusal_and_a_hostile_header_is_shown_inert(
        app_log: tuple[str, io.StringIO]) -> None:
    url, buf = app_log
    assert deliver(url, "ping", {"zen": "hi", "hook_id": 1}).status_code == 200
    assert refusals(buf) == []
    assert shown("a\tb" + "x" * 100) == "a?b" + "x" * 77 + "…" and shown("") == "-"


def test_metrics_answers_are_not_counted_as_webhook_requests(app_log: tuple[str, io.StringIO]) -> None:
    url, _ = app_log
    for _ in range(3):
        wrong = httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer wrong-token-of-the-tests"})
        assert wrong.status_code == 401
    assert deliver(url, "ping", {"zen": "hi", "hook_id": 1}).status_code == 200
    counted = [ln for ln in scrape(url).text.splitlines() if ln.startswith("rtcbot_webhook_requests_total{")]
    assert counted == ['rtcbot_webhook_requests_total{event="ping",status="200"} 1.0'], counted
