"""X-GitHub-Event and X-GitHub-Delivery on every log line, accepted deliveries' as well as
refused ones' (bot/core/logs.py `shown`).

Attack covered: forging or flooding the service's log through the two headers. GitHub's
signature covers the body only, so whoever replays or relays a signed body writes the headers.
On f32233f a refused delivery's line showed them inert, but an accepted one's did not: the
"delivery answered" line, the delivery's context on every line written while it was handled,
and every line of the jobs it made (worker and sweep) quoted them as sent, NEL and all, so one
header made a second line in the text log. Now every line shows them cut to 80 printable ASCII
characters.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator

import httpx
import pytest

from bot.core import logs
from bot.core.settings import LogSettings
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff, sign

FORGED = '" level=info message="delivery accepted'
DELIVERY = "id\x85forged line\u2028" + FORGED  # NEL and LINE SEPARATOR: line breaks to log readers
FLOOD = DELIVERY + "x" * 5000  # refused (over 100 characters: GitHub's ids are GUIDs), shown cut
EVENT = f"pull_request\t{FORGED}\x85fake"
BREAKS = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # what some reader takes as a line break
SHOWN = re.compile(r"[\x21-\x7e]{1,80}…?")  # bot/core/logs.py `shown`
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d ")


@pytest.fixture
def log_buffer() -> Iterator[Callable[[str], io.StringIO]]:
    """`log_buffer(format)`: the root logger configured as `rtcbot serve` configures it (info)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    def make(fmt: str) -> io.StringIO:
        buf = io.StringIO()
        logs.configure(LogSettings(log_format=fmt), default=logging.INFO, stream=buf)  # type: ignore[arg-type]
        return buf

    try:
        yield make
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def raw_headers(event: str, delivery: str, body: bytes, secret: str) -> dict[bytes, bytes]:
    """Headers as a raw client sends them: any byte, decoded by the server as Latin-1."""
    return {b"Content-Type": b"application/json", b"X-GitHub-Event": event.encode("utf-8"),
            b"X-GitHub-Delivery": delivery.encode("utf-8"), b"X-Hub-Signature-256": sign(body, secret).encode()}


def send(a: App, event: str, delivery: str, payload: dict[str, object], secret: str) -> int:
    body = json.dumps(payload).encode()
    return httpx.post(f"{a.url}/webhook", content=body, headers=raw_headers(event, delivery, body, secret),
                      timeout=30).status_code


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_hostile_headers_are_inert_on_every_line_accepted_or_refused(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub],
        log_buffer: Callable[[str], io.StringIO], fmt: str) -> None:
    gh = fake_github()
    gh.add_pr(1, diff_text=many_hunks_diff("src/many.py", hunks=1))
    a = apps(gh)
    buf = log_buffer(fmt)
    secret = a.rt.settings.webhook_secret or ""
    # accepted: a pull request's delivery with a hostile id (its jobs run, the worker logs them) …
    assert send(a, "pull_request", DELIVERY, gh.pr_event("opened", 1), secret) == 202
    a.run()
    # … a hostile event (accepted, nothing to do); refused: a wrong signature
    assert send(a, EVENT, "d-2", gh.pr_event("opened", 1), secret) == 200
    assert send(a, EVENT, DELIVERY, gh.pr_event("opened", 1), "not the App's secret") == 401
    assert a.gh.runs("rtcbot / EditingRTC")[0]["status"] == "completed"
    text = buf.getvalue()
    lines = text.splitlines()  # splits at NEL and LINE SEPARATOR too
    assert len(lines) >= 5
    if fmt == "text":
        stray = [ln for ln in lines if not STAMP.match(ln)]
        assert not stray, stray[:3]  # no line that does not start a record
        assert not BREAKS.search(text.replace("\n", "")) and FORGED not in text
    else:
        records = [json.loads(ln) for ln in lines]
        named = [r for r in records if "delivery" in r]
        assert len(named) >= 4, records  # the delivery's lines, its jobs' lines, the refusal
        for r in records:
            assert not BREAKS.search(r["message"]) and FORGED not in r["message"], r["message"][:200]
        for r in named:
            assert SHOWN.fullmatch(r["delivery"]), r["delivery"][:200]
    assert "forged?line" in text  # shown cut and inert, not left out
    # a flood (5,000 characters of id, signed): refused, shown cut (on PostgreSQL it was a 503)
    assert send(a, EVENT, FLOOD, gh.pr_event("opened", 1), secret) == 400
    [refused] = [ln for ln in buf.getvalue().splitlines() if "over 100 characters" in ln]
    assert "x" * 30 not in refused and len(refused) < 600, refused
