"""The one result shape: `name` is an analyzer's id and `title` its display title on reports as
on analyzers; what other code reads of a finding is a typed field (the review comment it is
about, CWE ids, rule tags and description), never a key of the display-only `evidence`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzers import registry
from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from bot.store.store import Store


def test_reports_and_analyzers_share_one_naming() -> None:
    for name in registry.ANALYZERS:
        analyzer = registry.get(name)
        assert analyzer.name == name and analyzer.title and analyzer.help.startswith(analyzer.title)
        assert registry.help_text(name) == analyzer.help
    report = AnalyzerReport("editing_rtc", "EditingRTC")
    assert (report.name, report.title) == ("editing_rtc", "EditingRTC")
    assert not hasattr(report, "analyzer")


def test_round_trip_keeps_the_typed_fields_and_reads_the_old_shape() -> None:
    f = Finding("crscore", "comment by alice", path="a.py", start_line=3, comment_id=991,
                cwe=["CWE-89"], tags=["security"], rule_description="SQL built from input",
                fix=Fix("a.py", 3, 3, "x\n"))
    report = AnalyzerReport("crscore", "CRScore", [f], skipped=[Skipped("b.png", "binary")])
    again = AnalyzerReport.from_dict(report.to_dict())
    assert again == report
    old: dict[str, Any] = {"analyzer": "crscore", "name": "CRScore", "findings": [], "scores": {}, "skipped": [],
           "notes": [], "usage": {}, "error": None}
    assert (AnalyzerReport.from_dict(old).name, AnalyzerReport.from_dict(old).title) == ("crscore", "CRScore")


def test_the_store_records_the_comment_a_finding_is_about(tmp_path: Path) -> None:
    """Before: the store looked for evidence["comment_id"], which no analyzer set: always NULL."""
    store = Store(f"sqlite:///{tmp_path / 'rtcbot.sqlite3'}")
    try:
        cr = store.checks.save("o/r", "rtcbot / CRScore", "a" * 40, status="completed")
        store.checks.save_findings(cr.id, [Finding("crscore", "comment", path="a.py", start_line=1, comment_id=991,
                                   evidence={"comment": "why?"}),
                                   Finding("crscore", "other", path="a.py", start_line=2)])
        assert [row.comment_id for row in store.checks.findings(cr.id)] == ["991", None]
    finally:
        store.close()
