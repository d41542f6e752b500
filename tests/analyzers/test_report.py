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


def test_the_embedded_model_is_a_fact_its_warning_published_among_the_notes_and_read_back() -> None:
    """The outputs decide the warning on `embedded`, never by finding its sentence in the notes;
    the published notes (JSON, stored reports) still carry the sentence, and a report stored
    before the fact existed (the sentence only) reads back as embedded."""
    from analyzers.report import EMBEDDED_NOTE

    report = AnalyzerReport("editing_rtc", "EditingRTC", notes=["2 answers cut"], embedded=True)
    stored = report.to_dict()
    assert stored["notes"] == ["2 answers cut", EMBEDDED_NOTE] and stored["embedded"] is True
    assert AnalyzerReport.from_dict(stored) == report
    old = {"name": "editing_rtc", "title": "EditingRTC", "notes": [EMBEDDED_NOTE, "2 answers cut"]}
    assert AnalyzerReport.from_dict(old) == report
    plain = AnalyzerReport("toy", "Toy", notes=["x"]).to_dict()
    assert "embedded" not in plain and "stopped_by_budget" not in plain and plain["notes"] == ["x"]


def test_what_a_budget_cut_off_is_counted_by_the_fact_not_by_the_word_budget() -> None:
    """A file under budget/ skipped by an ignore glob, or a note that says "budget", is not
    work a spent LLM budget cut off; an item a budget cut off says so whatever its words."""
    from bot.core.gate import Verdict, parse_fail_on
    from bot.core.review import Result

    words = AnalyzerReport("crscore", "CRScore", notes=["the budget figures are from budget.yml"],
                           skipped=[Skipped("budget/plan.py", "ignored by budget/**", "policy")])
    cut = AnalyzerReport("editing_rtc", "EditingRTC", stopped_by_budget=True,
                         skipped=[Skipped("a.py @@ -1 +1 @@", "not scored: out of requests", budget=True)])
    result = Result([words, cut], Verdict(parse_fail_on("")), budget_cut="request budget of 3 spent")
    assert result.budget_message() == ("the LLM budget ran out (request budget of 3 spent): 1 item skipped; "
                                       "EditingRTC stopped early; the result is partial")
    stored = Skipped.from_dict(cut.to_dict()["skipped"][0])
    assert stored.budget and "budget" not in words.to_dict()["skipped"][0]
