"""The dashboard's figures (store rows → numbers, each analyzer's own panel) and charts
(numbers → accessible SVG)."""

from __future__ import annotations

import calendar
from pathlib import Path

import pytest

from analyzers.autofix import view as autofix_view
from analyzers.crscore import view as crscore_view
from analyzers.editing_rtc import view as editing_rtc_view
from analyzers.presentation import DashboardData, Panel, Table
from bot.app.dashboard import charts, figures
from bot.app.dashboard.data import load, repos_with_data
from bot.app.dashboard.figures import GitHubLinks, Item, Job, Run, Suggestion
from bot.store.store import Store
from tests.bot.dashboard.support import AUTOFIX, CRSCORE, EDITING_RTC, seed

T0 = calendar.timegm((2026, 11, 25, 12, 0, 0))  # a Wednesday
DAY = 86400.0


def run(id_: int, name: str, pr: int, at: float, **scores: float) -> Run:
    return Run(id=id_, name=name, head_sha=f"{id_:040x}", pr_number=pr, scores=scores, github_id=900 + id_,
               updated_at=at)


def data(runs: list[Run], items: list[Item] = [], suggestions: list[Suggestion] = [],  # noqa: B006 - read only
         github_url: str = "https://github.com") -> DashboardData:
    """An analyzer's rows as figures.py hands them: each pull request's newest run."""
    name = runs[0].name if runs else ""
    own = figures.latest_per_pr(runs, name)
    ids = {r.id for r in own}
    return DashboardData("o/r", own, [it for it in items if it.run_id in ids], suggestions,
                         GitHubLinks(github_url, "o/r"))


def test_week_is_the_iso_weeks_monday() -> None:
    assert figures.week(T0) == "2026-11-23"
    assert figures.week(T0 - 2 * DAY) == "2026-11-23"  # Monday itself
    assert figures.week(T0 - 3 * DAY) == "2026-11-16"  # the Sunday before


def test_a_pull_request_counts_once_with_its_newest_head() -> None:
    runs = [run(1, EDITING_RTC, 7, T0 - DAY, rtc=0.2, lift=0.1), run(2, EDITING_RTC, 7, T0, rtc=0.8, lift=0.5),
            run(3, EDITING_RTC, 8, T0 - 8 * DAY, rtc=0.4, lift=-0.2), run(4, CRSCORE, 7, T0)]
    per_pr = editing_rtc_view.per_pr(data([r for r in runs if r.name == EDITING_RTC]))
    assert per_pr == [{"pr": 7, "week": "2026-11-23", "rtc": 0.8, "lift": 0.5},
                      {"pr": 8, "week": "2026-11-16", "rtc": 0.4, "lift": -0.2}]
    weekly = editing_rtc_view.per_week(per_pr + [{"pr": 9, "week": "2026-11-23", "rtc": 0.4, "lift": 0.1}])
    assert {(r["week"], r["metric"]): r["value"] for r in weekly} == {
        ("2026-11-16", "rtc"): 0.4, ("2026-11-16", "lift"): -0.2,
        ("2026-11-23", "rtc"): 0.6, ("2026-11-23", "lift"): 0.3}


def test_crscore_rows_per_comment_of_the_newest_head_only() -> None:
    runs = [run(1, CRSCORE, 3, T0 - DAY), run(2, CRSCORE, 3, T0)]
    items = [Item(1, "a.py", 1, 1, {"con": 0.1, "comp": 0.1, "rel": 0.1}),  # an older head: left out
             Item(2, "a.py", 1, 1, {"con": 0.5, "comp": 0.25, "rel": 1 / 3})]
    rows = crscore_view.per_comment(data(runs, items))
    assert sorted((r["metric"], r["value"]) for r in rows) == [("Comp", 0.25), ("Con", 0.5), ("Rel", 1 / 3)]


def test_autofix_counts_findings_fixes_and_applied_suggestions() -> None:
    runs = [run(1, AUTOFIX, 1, T0, findings=3, fixes_proposed=2, fixed=1),
            run(2, AUTOFIX, 2, T0, findings=1, fixes_proposed=1, fixed=1)]
    sugg = [Suggestion("autofix", T0, True), Suggestion("autofix", T0, False), Suggestion("review", T0, True)]
    got = {r["what"]: r["count"] for r in autofix_view.per_week(data(runs, [], [s for s in sugg
                                                                                if s.analyzer == "autofix"]))}
    assert got == {"findings": 4, "fixes proposed": 3, "fixes verified": 2, "suggested": 2, "applied": 1}


def test_lowest_hunks_link_to_their_lines_and_check_run() -> None:
    runs = [run(1, EDITING_RTC, 4, T0, rtc=0.5)]
    items = [Item(1, "src/a b.py", 10, 12, {"rtc": 0.7}), Item(1, "src/c.py", 5, 5, {"rtc": 0.0}),
             Item(1, None, None, None, {"lift": 0.0})]
    low = editing_rtc_view.lowest_hunks(data(runs, items, github_url="https://ghe.example.com/"))
    assert [row[1].text for row in low.rows] == ["src/c.py:5", "src/a b.py:10-12"]
    assert low.rows[0][1].href == f"https://ghe.example.com/o/r/blob/{1:040x}/src/c.py#L5"
    assert str(low.rows[1][1].href).endswith("/src/a%20b.py#L10-L12")
    assert low.rows[0][4].href == "https://ghe.example.com/o/r/runs/901"


def test_an_inconclusive_hunk_is_no_low_score_and_is_counted_apart() -> None:
    runs = [run(1, EDITING_RTC, 4, T0, rtc=0.7)]
    items = [Item(1, "src/a.py", 10, 12, {"rtc": 0.7}),
             Item(1, "src/b.py", 5, 5, {"rtc": 0.0}, inconclusive="baseline"),
             Item(1, "src/c.py", 1, 1, {"rtc": 0.0}, inconclusive="unqualified")]
    shown = data(runs, items)
    assert [row[1].text for row in editing_rtc_view.lowest_hunks(shown).rows] == ["src/a.py:10-12"]
    totals = [(t.value, t.label) for t in editing_rtc_view.dashboard(shown).totals]
    assert ("2", "inconclusive hunks (not scored: the model, not the change)") in totals
    conclusive = [(t.value, t.label) for t in editing_rtc_view.dashboard(data(runs, items[:1])).totals]
    assert not any("inconclusive" in label for _, label in conclusive)


def test_the_stores_inconclusive_hunks_stay_out_of_the_lowest(tmp_path: Path) -> None:
    from bot.store.schema import CheckRunRow, FindingRow

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        seed(store, "o/r", prs=2, now=T0)
        with store.db.session() as s:
            newest = max(s.query(CheckRunRow).filter_by(name=EDITING_RTC), key=lambda r: r.updated_at)
            s.add(FindingRow(check_run_id=newest.id, analyzer="editing_rtc", path="src/confused.py", start_line=1,
                             end_line=2, key="x", scores={"rtc": 0.0, "lift": -1.0},
                             data={"title": "def x", "inconclusive": "unqualified"}))
        f = load(store, "o/r", 77, "https://github.com", now=T0)
        (panel,) = [sec.panel for sec in f.sections if sec.name == "editing_rtc"]
        assert "src/confused.py" not in {row[1].text.split(":")[0] for row in panel.tables[1].rows}
        assert ("1", "inconclusive hunks (not scored: the model, not the change)") in [
            (t.value, t.label) for t in panel.totals]
    finally:
        store.close()


def test_llm_sums_per_week() -> None:
    jobs = [Job(1, 5, 100, T0), Job(2, 7, 300, T0 - DAY), Job(3, 1, 10, T0 - 7 * DAY)]
    assert figures.llm(jobs) == [{"week": "2026-11-16", "requests": 1, "tokens": 10},
                                 {"week": "2026-11-23", "requests": 12, "tokens": 400}]


def test_accessible_names_the_svg() -> None:
    out = charts.accessible('<svg xmlns="http://www.w3.org/2000/svg" width="2"><g/></svg>', 'RTC "per" PR <1>')
    assert out.startswith('<svg role="img" aria-label="RTC &quot;per&quot; PR &lt;1&gt;" xmlns=')
    assert '<title>RTC &quot;per&quot; PR &lt;1&gt;</title><g/>' in out
    with pytest.raises(ValueError):
        charts.accessible("<html/>", "x")


@pytest.mark.slow  # seeds a store and renders every chart: ~10 s of CPU
def test_a_seeded_store_gives_every_figure_and_chart(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    seed(store, "o/r", prs=30, now=T0)
    seed(store, "o/other", prs=3, now=T0)
    assert repos_with_data(store, dict.fromkeys(["o/r", "o/other", "o/none"], 77)) == {"o/r", "o/other"}
    assert repos_with_data(store, dict.fromkeys([f"o/r{i}" for i in range(1200)] + ["o/other"], 77)) == {"o/other"}
    assert repos_with_data(store, {}) == set()
    assert repos_with_data(store, {"o/r": 78}) == set()  # the same name under another installation
    f = load(store, "o/r", 77, "https://github.com", now=T0)
    panels: dict[str, Panel] = {s.name: s.panel for s in f.sections}
    assert list(panels) == ["editing_rtc", "crscore", "autofix"]  # every analyzer that draws, in registry order
    shown = {c.key: c.values for p in panels.values() for c in p.charts}
    assert f.totals["prs"] == 30 and len(shown["rtc-per-pr"]) == 30
    assert len({r["week"] for r in shown["rtc-per-week"]}) >= 9  # ~10 weeks of pull requests
    assert {r["metric"] for r in shown["crscore"]} == {"Rel", "Con", "Comp"}
    assert {r["what"] for r in shown["autofix"]} == {"findings", "fixes proposed", "fixes verified", "suggested",
                                                     "applied"}
    assert [(t.value, t.label) for t in panels["autofix"].totals] == [("5/10", "AutoFix suggestions applied")]
    assert f.totals["llm_tokens"] == sum(r["tokens"] for r in f.llm) > 0
    assert f.totals["llm_prompt_tokens"] + f.totals["llm_completion_tokens"] == f.totals["llm_tokens"]
    assert 0 < f.totals["llm_cached_tokens"] < f.totals["llm_prompt_tokens"]
    prs, hunks = panels["editing_rtc"].tables
    assert isinstance(prs, Table) and prs.title == "Pull requests with the lowest EditingRTC"
    rtcs = [float(row[1].text) for row in prs.rows]
    assert rtcs == sorted(rtcs) and prs.rows[0][0].href == f"https://github.com/o/r/pull/{prs.rows[0][0].text[1:]}"
    assert len(hunks.rows) == editing_rtc_view.LOWEST
    drawn = charts.charts(f)
    assert [c.key for c in drawn] == ["rtc-per-pr", "rtc-per-week", "crscore", "autofix", "llm"]
    for c in drawn:
        assert c.svg.startswith('<svg role="img" aria-label="') and "<title>" in c.svg, c.key
    assert load(store, "o/nothing", 77, "https://github.com", now=T0).empty
    assert load(store, "o/r", 78, "https://github.com", now=T0).empty
