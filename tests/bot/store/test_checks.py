"""Check runs and findings (bot/store/checks.py) on SQLite and on PostgreSQL: one row per
(repository, check name, head SHA), claimed once; findings replaced on each save; the
dashboard's reads by repository and window."""

from __future__ import annotations

from analyzers.report import Finding, Inconclusive
from bot.store.store import Store


def test_a_check_run_is_claimed_once_and_saved_in_place(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.checks.claim("o/r", "rtcbot / EditingRTC", "a" * 40, 1)
        assert not store.checks.claim("o/r", "rtcbot / EditingRTC", "a" * 40, 1)
        row = store.checks.save("o/r", "rtcbot / EditingRTC", "a" * 40, github_id=7, status="completed")
        again = store.checks.get("o/r", "rtcbot / EditingRTC", "a" * 40)
        assert again is not None and again.id == row.id and (again.github_id, again.status) == (7, "completed")
        assert store.checks.get("o/r", "rtcbot / EditingRTC", "b" * 40) is None
    finally:
        store.close()


def test_findings_are_replaced_and_read_for_the_dashboard(db_url: str) -> None:
    store = Store(db_url)
    try:
        ids = {"repository_id": 5, "installation_id": 77}  # GitHub's: the dashboard reads by them
        run = store.checks.save("o/r", "rtcbot / EditingRTC", "a" * 40, status="completed", **ids)
        other = store.checks.save("o/other", "rtcbot / EditingRTC", "a" * 40, status="completed",
                                  repository_id=6, installation_id=77)
        store.checks.save_findings(run.id, [Finding("editing_rtc", "old", path="a.py", start_line=1, end_line=1)])
        store.checks.save_findings(run.id, [Finding("editing_rtc", "hunk 1", path="a.py", start_line=3, end_line=4,
                                                    scores={"rtc": 0.5}),
                                            Finding("editing_rtc", "hunk 2", path="b.py", start_line=1, end_line=2,
                                                    scores={"rtc": 0.0}, inconclusive=Inconclusive.BASELINE)])
        f, _ = sorted(store.checks.findings(run.id), key=lambda row: row.id)
        assert (f.path, f.start_line, f.scores) == ("a.py", 3, {"rtc": 0.5})
        assert store.checks.repositories_among([(5, 77), (5, 78), (9, 77)]) == {(5, 77)}
        assert [r.id for r in store.checks.completed_since(5, 77, 0)] == [run.id]
        assert store.checks.completed_since(5, 78, 0) == []  # the same repository id under another installation
        assert store.checks.scored_findings(5, 77, 0, ["rtcbot / EditingRTC"], 10) == [  # newest first
            (run.id, "b.py", 1, 2, {"rtc": 0.0}, "hunk 2", "baseline"),
            (run.id, "a.py", 3, 4, {"rtc": 0.5}, "hunk 1", "")]
        assert store.checks.scored_findings(5, 77, 0, ["rtcbot / CRScore"], 10) == []
        assert store.checks.findings(other.id) == []
    finally:
        store.close()
