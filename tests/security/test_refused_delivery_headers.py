"""A refused delivery's log line (bot/app/refusals.py) quotes two headers that anyone who
reaches the webhook's port writes: the delivery id and the event. Played as that stranger, with
a wrong signature: headers that try to forge a second log line (NEL, a line separator's
Latin-1 cousin), to smuggle a fake record, or to flood the log are shown cut and inert, and the
refusal stays one line naming the real reason."""

from __future__ import annotations

import io
import json

import httpx

from tests.bot.test_refused_deliveries import app_log, refusals  # noqa: F401  (fixture)
from tests.fakes.github_server import sign

FORGED = '" level=info message="delivery accepted'


def test_a_strangers_headers_cannot_forge_or_flood_the_refusal_line(
        app_log: tuple[str, io.StringIO]) -> None:  # noqa: F811
    url, buf = app_log
    body = json.dumps({"zen": "hi"}).encode()
    # Latin-1 bytes, as a raw client sends them (NEL: a line break to some log readers)
    delivery = "id\x85refused delivery ok (event ping): 202".encode("latin-1") + b"x" * 5000
    headers = {b"Content-Type": b"application/json", b"X-GitHub-Event": f"ping\t{FORGED}".encode(),
               b"X-GitHub-Delivery": delivery, b"X-Hub-Signature-256": sign(body, "not the App's secret").encode()}
    r = httpx.post(f"{url}/webhook", content=body, headers=headers, timeout=30)
    assert r.status_code == 401, r.text
    [line] = refusals(buf)  # one refusal, whatever the headers say
    message = line["message"]
    assert "\x85" not in buf.getvalue() and "\t" not in message
    assert len(message) < 300, message  # 5,000 characters of header are not a 5 KB log line
    assert FORGED not in message and message.endswith("401 missing or wrong X-Hub-Signature-256")
