"""A new analyzer is one module and one registry line; a new output is one module and one
registration: nothing in reporters/ or bot/ changes for either.

The toy analyzer and the toy reporter below live in this module and are registered for each
test's duration only (monkeypatch puts the registries back). The toy analyzer needs no LLM: it
counts the lines a change adds, proposes a verified fix for the first, and says its headline,
its help and its dashboard itself. Its findings reach every surface: `rtcbot review` in each
printable format (click's CliRunner on `bot.entry.main`), the Action's check run and step
summary (`run_action` in-process against the fake GitHub), the App's check run (the Runtime
draining its queue), and the dashboard's figures and charts. The toy reporter is driven by
the command line (`--format`), the Action (`reporters` input) and the App (RTCBOT_REPORTERS).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, ClassVar

import pytest
from click.testing import CliRunner

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext
from analyzers.info import AnalyzerInfo
from analyzers.options import AnalyzerOptions
from analyzers.presentation import Chart, DashboardData, Panel, Run, Total
from analyzers.report import AnalyzerReport, Finding, Fix
from reporters import base as reporters
from reporters.base import Sinks, Target
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)

PATCH = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,4 +1,5 @@\n def add(a, b):\n-    return a - b\n"
         "+    total = a + b\n+    return total\n \n def sub(a, b):\n")
HEADLINE = "2 toy lines counted"
HELP = "Toy: counts the lines a change adds (a test's analyzer)."
TOKEN = "ghs_plugin_token"


# ---------------------------------------------------------------------------- the toy analyzer
class ToyOptions(AnalyzerOptions):
    weight: float = 1.0


class ToyAnalyzer(AnalyzerInfo):
    name = "toy"
    title = "Toy"
    help = HELP
    options_type = ToyOptions

    @staticmethod
    def headline(report: AnalyzerReport) -> str | None:
        n = int(report.scores.get("toys", 0))
        return f"{n} toy line{'s' if n != 1 else ''} counted"

    @staticmethod
    def dashboard(data: DashboardData) -> Panel:
        values = [{"pr": r.pr_number, "toys": r.scores.get("toys", 0.0), "half": 0.5} for r in data.runs]
        return Panel(charts=[Chart("toy-per-pr", "Toy lines per pull request", f"Toy lines of {len(values)} PRs",
                                   "bars+points", values, x="pr", x_title="pull request", y="toys",
                                   y_title="toy lines", points="half")],
                     totals=[Total(str(len(values)), "toy pull requests")])

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        findings: list[Finding] = []
        for f, h in changes.hunks():
            for line in h.added_lines:
                fix = Fix(f.path, line, line, "    total = b + a\n", "-x\n+y\n") if not findings else None
                findings.append(Finding("toy", f"toy line {line}", "an added line, counted", f.path, line, line,
                                        scores={"toy": 1.0, **({"rtc_pass": 1.0} if fix else {})}, fix=fix,
                                        key=f"{f.path}:{line}"))
        return AnalyzerReport("toy", "Toy", findings, scores={"toys": float(len(findings))})


# ---------------------------------------------------------------------------- the toy reporter
class ToyReporter(reporters.Reporter):
    """Keeps what it is given (every surface's instance, for the test to read) and prints one
    line per report where it has a stream."""

    name = "toy-out"
    seen: ClassVar[list[tuple[str, str]]] = []  # (pull request head, analyzer) as published

    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream
        self.target = Target()

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> ToyReporter:
        return cls(sinks.stream)

    def start(self, target: Target, analyzers: Mapping[str, str]) -> None:
        self.target = target

    def publish(self, report: AnalyzerReport) -> None:
        ToyReporter.seen.append((self.target.head_sha, report.name))
        if self.stream is not None:
            print(f"toy-out: {report.title} has {len(report.findings)} findings", file=self.stream)

    def flush(self) -> int:
        return len(ToyReporter.seen)


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy analyzer and reporter registered, one line each, for this test only."""
    monkeypatch.setitem(registry.ANALYZERS, "toy", f"{__name__}:ToyAnalyzer")
    monkeypatch.setitem(reporters.REPORTERS, "toy-out", f"{__name__}:ToyReporter")
    ToyReporter.seen = []
    yield


# ---------------------------------------------------------------------------- the command line
def review(tmp_path: Path, *args: str) -> Any:
    from bot.entry import main

    patch = tmp_path / "change.diff"
    patch.write_text(PATCH, encoding="utf-8")
    return CliRunner().invoke(main, ["review", str(patch), "--analyzers", "toy", "--quiet", *args],
                              catch_exceptions=False)


@pytest.mark.usefixtures("plugins")
def test_the_toy_analyzer_reaches_every_format_of_the_command_line(tmp_path: Path) -> None:
    text = review(tmp_path, "--format", "text")
    assert text.exit_code == 0, text.output
    assert "Toy" in text.output and HEADLINE in text.output  # its own headline
    data = json.loads(review(tmp_path, "--format", "json").output)
    [report] = data["reports"]
    assert (report["name"], len(report["findings"]), report["scores"]) == ("toy", 2, {"toys": 2.0})
    markdown = review(tmp_path, "--format", "markdown").output
    assert HEADLINE in markdown and "toy line 2" in markdown
    sarif = json.loads(review(tmp_path, "--format", "sarif").output)
    [run] = sarif["runs"]
    assert len(run["results"]) == 2 and HELP in json.dumps(run["tool"])  # its help, as the rule's
    posted = json.loads(review(tmp_path, "--format", "github-review").output)
    assert [(c["path"], c["line"]) for c in posted["comments"]] == [("src/calc.py", 2)]  # the verified fix
    # in generic words, its title: the toy declares no `in_review` or `fix_note`, and no other
    # analyzer's words (a Semgrep re-scan, Patched RTC) are said of its fix
    assert posted["body"] == f"**{HEADLINE}.**\n\nrtcbot Toy: 1 fix you can commit."  # the verdict first
    assert "Verified by its analyzer's checks." in posted["comments"][0]["body"]
    assert "Semgrep" not in json.dumps(posted) and "Patched RTC" not in json.dumps(posted)


@pytest.mark.usefixtures("plugins")
def test_the_toy_reporter_is_a_format_of_the_command_line(tmp_path: Path) -> None:
    assert "toy-out" in reporters.printable()
    out = review(tmp_path, "--format", "toy-out")
    assert out.exit_code == 0, out.output
    assert "toy-out: Toy has 2 findings" in out.output and ToyReporter.seen == [("", "toy")]


def test_without_registration_neither_exists(tmp_path: Path) -> None:
    bad = review(tmp_path, "--format", "text")
    assert bad.exit_code == 2 and "unknown analyzer 'toy'" in bad.output
    assert "toy-out" not in reporters.printable()


# ---------------------------------------------------------------------------- the Action
def run_toy_action(tmp_path: Path, gh: FakeGitHub, reporters: str) -> tuple[Any, Any]:
    """The Action on the toy's pull request with the `reporters` input: (its result, the PR)."""
    from bot.action.run import run_action
    from bot.action.settings import ActionSettings

    gh.grant_token(TOKEN)
    pr = gh.add_pr(3, diff_text=PATCH)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gh.pr_event("opened", 3)), encoding="utf-8")
    (tmp_path / "ws").mkdir()

    def no_llm() -> Any:
        raise AssertionError("the toy analyzer asks no model")

    result = run_action(ActionSettings(event_path=str(event), event_name="pull_request", api_url=gh.base_url,
                                       token=TOKEN, workspace=tmp_path / "ws", llm_factory=no_llm, analyzers="toy",
                                       reporters=reporters, step_summary_path=str(tmp_path / "summary.md")),
                        log=open(tmp_path / "log.txt", "w"), stdout=open(tmp_path / "stdout.txt", "w"))
    assert result.exit_code == 0, (tmp_path / "log.txt").read_text()
    return result, pr


@pytest.mark.usefixtures("plugins")
def test_the_action_posts_the_toys_check_run_summary_and_reporter(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811  (the fixture)
    gh = fake_github()
    _, pr = run_toy_action(tmp_path, gh, "toy-out")
    summary = tmp_path / "summary.md"
    [run] = gh.runs("rtcbot / Toy", pr.head_sha)
    assert run["status"] == "completed" and run["output"]["title"] == HEADLINE
    assert sorted(a["start_line"] for a in run["annotations"]) == [2, 3]
    assert HEADLINE in summary.read_text(encoding="utf-8")
    assert ToyReporter.seen == [(pr.head_sha, "toy")]
    assert "toy-out: Toy has 2 findings" in (tmp_path / "stdout.txt").read_text()


@pytest.mark.usefixtures("plugins")
def test_check_runs_named_among_the_actions_reporters_are_opened_once(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811  (the fixture)
    """`reporters: check-runs,toy-out`: the check runs are the Action's own output (as on the
    App, which leaves them out of RTCBOT_REPORTERS), never a further one opened again."""
    gh = fake_github()
    _, pr = run_toy_action(tmp_path, gh, "check-runs,toy-out")
    [run] = gh.runs("rtcbot / Toy", pr.head_sha)
    assert run["status"] == "completed" and ToyReporter.seen == [(pr.head_sha, "toy")]


# ---------------------------------------------------------------------------- the App
@pytest.mark.usefixtures("plugins")
def test_the_app_posts_the_toys_check_run_and_drives_the_toy_reporter(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811  (the fixture)
    from bot.app.runtime import Runtime
    from bot.app.web import create_app
    from tests.bot.app_support import deliver, drain, make_settings, serve

    gh = fake_github()
    settings = make_settings(tmp_path, gh, analyzers=["toy"], reporters=["toy-out"])
    rt = Runtime(settings)
    try:
        pr = gh.add_pr(5, diff_text=PATCH)
        with serve(create_app(settings, runtime=rt)) as url:
            assert deliver(url, "pull_request", gh.pr_event("opened", 5)).status_code == 202
            drain(rt)
        [run] = [r for r in gh.runs("rtcbot / Toy", pr.head_sha) if r["status"] == "completed"]
        assert run["output"]["title"] == HEADLINE and run["external_id"] == "5:toy"
        assert sorted(a["start_line"] for a in run["annotations"]) == [2, 3]
        assert ToyReporter.seen == [(pr.head_sha, "toy")]
    finally:
        rt.store.close()


# ---------------------------------------------------------------------------- the dashboard
@pytest.mark.usefixtures("plugins")
def test_the_toys_dashboard_panel_is_drawn() -> None:
    from bot.app.dashboard import charts, figures

    runs = [Run(1, "rtcbot / Toy", "a" * 40, 7, {"toys": 2.0}, 901, 1_800_000_000.0)]
    f = figures.figures("o/r", runs, [], [], [], "https://github.com")
    [toy] = [s for s in f.sections if s.name == "toy"]
    assert [(t.value, t.label) for t in toy.panel.totals] == [("1", "toy pull requests")]
    assert "rtcbot / Toy" in figures.item_checks()
    drawn = {c.key: c for c in charts.charts(f)}
    assert drawn["toy-per-pr"].svg.startswith('<svg role="img" aria-label="Toy lines of 1 PRs"')


class Undeclared:  # not a Reporter: its optional methods would be nowhere the type checker sees
    name = "undeclared"


def test_a_class_that_is_not_a_reporter_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(reporters.REPORTERS, "undeclared", f"{__name__}:Undeclared")
    with pytest.raises(TypeError, match=f"{__name__}:Undeclared is not a reporter"):
        reporters.reporter_class("undeclared")
