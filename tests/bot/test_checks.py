"""Check-run rendering: limits, batches, conclusions (pure)."""

from __future__ import annotations

import json
from pathlib import Path

from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from bot import checks
from bot.config import parse_config

ROOT = Path(__file__).resolve().parents[2]


def report(n: int = 3, evidence_chars: int = 10) -> AnalyzerReport:
    findings = [Finding("editing_rtc", f"hunk {i}", f"msg {i}", "a.py", i * 10 + 1, i * 10 + 3,
                        scores={"rtc": i / max(n, 1)}, evidence={"descriptions": ["x" * evidence_chars]})
                for i in range(n)]
    return AnalyzerReport("editing_rtc", "EditingRTC", findings, scores={"rtc": 0.4},
                          skipped=[Skipped("logo.png", "binary file")])


def test_render_maps_findings_to_annotations_and_a_summary() -> None:
    out = checks.render(report())
    assert out.conclusion == "neutral"
    assert [(a["path"], a["start_line"], a["end_line"]) for a in out.annotations] == [("a.py", 1, 3), ("a.py", 11, 13), ("a.py", 21, 23)]
    assert all(a["annotation_level"] == "notice" for a in out.annotations)
    assert out.title == "EditingRTC: rtc 0.40, 3 findings"
    assert "`logo.png`: binary file" in out.summary and "### Lowest rtc" in out.summary


def test_annotations_in_batches_of_50() -> None:
    out = checks.render(report(120))
    assert [len(b) for b in out.batches()] == [50, 50, 20]


def test_summary_is_cut_cleanly_under_the_limit() -> None:
    big = report(5, evidence_chars=30_000)
    big.skipped = [Skipped(f"vendor/file{i}.bin", "binary file") for i in range(5000)]
    out = checks.render(big)
    assert len(out.summary) <= checks.MAX_OUTPUT_CHARS
    assert "characters left out" in out.summary
    assert out.summary.count("```") % 2 == 0
    assert out.summary.count("<details>") == out.summary.count("</details>")
    text = "line\n" * 20_000
    cut = checks.cut(text)
    assert len(cut) <= 65_535 and cut.endswith("left out).") and "line\nline" in cut
    assert checks.cut("short") == "short"


def test_threshold_makes_failure() -> None:
    out = checks.render(report(), thresholds={"rtc": 0.5})
    assert out.conclusion == "failure" and "below the threshold" in out.summary
    assert checks.render(report(), thresholds={"rtc": 0.3}).conclusion == "neutral"


def test_error_report_and_fix_and_long_title() -> None:
    r = AnalyzerReport("autofix", "AutoFix", error="semgrep is not installed")
    out = checks.render(r)
    assert out.title == "AutoFix: could not run" and "semgrep is not installed" in out.summary
    f = Finding("autofix", "t" * 400, "use a safe call", "b.py", 5, 5, level="warning",
                fix=Fix("b.py", 5, 5, "safe()\n"))
    ann = checks.annotation_of(f)
    assert ann is not None and len(ann["title"]) == 255 and "```suggestion\nsafe()\n```" in ann["message"]
    assert checks.annotation_of(Finding("x", "no place")) is None


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
    assert m["default_permissions"] == {"checks": "write", "pull_requests": "read", "contents": "read", "metadata": "read"}
    assert set(m["default_events"]) >= {"pull_request", "pull_request_review", "pull_request_review_comment",
                                         "check_run", "check_suite"}
