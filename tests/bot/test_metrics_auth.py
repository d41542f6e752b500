"""/metrics behind the operator's bearer token (bot/app/web.py, RTCBOT_METRICS_TOKEN): its figures
count every installation's usage and the LLM cache's hits, so it answers only a scraper with
the token, and is off (404) while the setting is unset, never open to whoever reaches the port."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bot.app.runtime import Runtime
from bot.app.settings import load_settings
from bot.app.web import create_app
from bot.core.settings import SettingsError
from tests.bot.app_support import METRICS_TOKEN, make_settings, scrape, serve

FIGURES = "rtcbot_webhook_seconds"


def test_metrics_answer_only_the_bearer_token(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path))
    try:
        with serve(create_app(rt.settings, runtime=rt)) as url:
            ok = scrape(url)
            refused = [httpx.get(f"{url}/metrics"),  # no token
                       scrape(url, token="not-the-metrics-token-at-all"),
                       scrape(url, token=METRICS_TOKEN + "x"),  # the token as a prefix is not it
                       scrape(url, token=METRICS_TOKEN[:-1]),
                       httpx.get(f"{url}/metrics", headers={"Authorization": METRICS_TOKEN}),  # not a bearer
                       httpx.get(f"{url}/metrics", params={"token": METRICS_TOKEN})]
    finally:
        rt.store.close()
    assert ok.status_code == 200 and FIGURES in ok.text
    for r in refused:
        assert r.status_code == 401, r.text
        assert r.json()["message"] == "a bearer token is required (RTCBOT_METRICS_TOKEN)"
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        assert "rtcbot_" not in r.text


def test_metrics_are_off_without_a_token_setting(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path, metrics_token=None))
    try:
        with serve(create_app(rt.settings, runtime=rt)) as url:
            answers = [httpx.get(f"{url}/metrics"), scrape(url)]
            healthz = httpx.get(f"{url}/healthz")
    finally:
        rt.store.close()
    for r in answers:
        assert r.status_code == 404 and "rtcbot_" not in r.text
        assert r.json()["message"] == "not found: set RTCBOT_METRICS_TOKEN to serve /metrics"
    assert healthz.status_code in (200, 503)  # the health check is not behind the token


def test_a_short_token_is_an_error_naming_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RTCBOT_METRICS_TOKEN", "short")
    with pytest.raises(SettingsError) as e:
        load_settings()
    assert any(line.startswith("RTCBOT_METRICS_TOKEN: ") and "16" in line for line in e.value.lines)
