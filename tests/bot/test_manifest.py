"""The repository config's basics and the App manifest's permissions and events."""

from __future__ import annotations

import json
from pathlib import Path

from bot.core.config import parse_config

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
    """`issues: write` backs `issue_comment`: GitHub subscribes an App to that event only with
    Issues access (a manifest without it is refused: "Default events are not supported by
    permissions: issue_comment"), and a reaction on a conversation comment needs Issues: write."""
    m = json.loads((ROOT / "bot" / "app" / "manifest.json").read_text())
    assert m["default_permissions"] == {"checks": "write", "pull_requests": "write", "issues": "write",
                                        "contents": "read", "metadata": "read"}
    assert set(m["default_events"]) >= {"pull_request", "pull_request_review", "pull_request_review_comment",
                                         "pull_request_review_thread", "issue_comment",
                                         "check_run", "check_suite"}


def register_section() -> str:
    text = (ROOT / "docs" / "github-app.md").read_text(encoding="utf-8")
    return text.split("## 1. Register the app", 1)[1].split("\n## ", 1)[0]


def table(section: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header row starts with `| header |`, as cells."""
    lines = section.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"| {header} |"))
    rows = []
    for ln in lines[start + 2:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in ln.strip().strip("|").split("|")])
    return rows


def test_the_docs_ask_for_what_the_manifest_asks_for() -> None:
    """docs/github-app.md §1's permissions and events are the manifest's, no more, no less (the
    doc once asked for pull requests: read and left out pull_request_review_thread)."""
    m = json.loads((ROOT / "bot" / "app" / "manifest.json").read_text())
    section = register_section()
    permissions = {row[0].strip("`"): row[1] for row in table(section, "permission")}
    events = [row[0].strip("`") for row in table(section, "event")]
    assert permissions == m["default_permissions"]
    assert sorted(events) == sorted(m["default_events"]) and len(events) == len(set(events))
    assert all(len(row) == 3 and row[2] for row in table(section, "permission"))  # each says what for
