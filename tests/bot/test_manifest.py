"""The repository config's basics and the App manifest's permissions and events."""

from __future__ import annotations

import json
from pathlib import Path

from bot.config import parse_config

ROOT = Path(__file__).resolve().parents[2]


def test_repo_config() -> None:
    ok = parse_config("analyzers: {autofix: false, synthesis-rtc: true}\nthresholds: {editing_rtc: {rtc: 0.2}}\n")
    assert ok.error is None
    assert ok.enabled(["editing_rtc", "crscore", "autofix"]) == ["editing_rtc", "crscore", "synthesis_rtc"]
    assert ok.config.thresholds == {"editing_rtc": {"rtc": 0.2}}
    assert "not valid YAML at line" in (parse_config("a: [1,\n").error or "")
    assert "drafts" in (parse_config("drafts: maybe\n").error or "")
    assert "unknown analyzer" in (parse_config("thresholds: {x: {a: 1}}").error or "")
    assert parse_config(None).error is None and parse_config("").config.drafts is None
    model, note = parse_config("model: big\n").model(["small"])
    assert model is None and note and "not allowed" in note
    assert parse_config("model: small\n").model(["small"]) == ("small", None)


def test_manifest_asks_for_the_documented_permissions_and_events() -> None:
    m = json.loads((ROOT / "bot" / "manifest.json").read_text())
    assert m["default_permissions"] == {"checks": "write", "pull_requests": "write", "contents": "read", "metadata": "read"}
    assert set(m["default_events"]) >= {"pull_request", "pull_request_review", "pull_request_review_comment",
                                         "pull_request_review_thread",
                                         "check_run", "check_suite"}
