"""An analyzer says what it is through the registry (analyzers/registry.py), so that bot/ and
reporters/ ask rather than name it (issue #42): whether it runs the pull request's code, what
turns it on, the words for its scores and its headline.

The toy analyzer below lives in this module only and is registered with one line (monkeypatch
puts the registry back); no other file knows it. `rtcbot review` on a patch runs it through the
one review (bot/core/review.py) and prints its headline and its scores in its own words; a test
command turns it on; the Action on `pull_request_target` leaves it out because it declares that
it runs the pull request's code, and says so by its title.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, Tools
from analyzers.info import AnalyzerInfo
from analyzers.options import AnalyzerOptions
from analyzers.report import AnalyzerReport, Finding

PATCH = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,4 +1,6 @@\n def add(a, b):\n-    return a - b\n"
         "+    total = a + b\n+    total += 0\n+    return total\n \n def sub(a, b):\n")
HEADLINE = "the toy counted 3 added lines"
# the words for its scores: a count (shown whole) and a fraction; nothing outside this module has them
LABELS = {"toy_lines": "lines the toy counted", "toy_share": "share the toy liked"}


class ToyOptions(AnalyzerOptions):
    pass


class CountingToy(AnalyzerInfo):
    name = "toy"
    title = "CountingToy"
    help = "CountingToy: counts the lines a change adds (a test's analyzer)."
    options_type = ToyOptions
    runs_code = True  # as if it ran the pull request's tests
    turned_on_by = registry.TEST_COMMAND  # a test command turns it on
    labels = LABELS
    count_scores = ("toy_lines",)

    @staticmethod
    def headline(report: AnalyzerReport) -> str | None:
        return f"the toy counted {int(report.scores['toy_lines'])} added lines" if "toy_lines" in report.scores \
            else None

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        findings = [Finding(self.name, f"added line {line}", "an added line, counted", f.path, line, line,
                            scores={"toy_lines": 1.0})
                    for f, h in changes.hunks() for line in h.added_lines]
        return AnalyzerReport(self.name, self.title, findings,
                              scores={"toy_lines": float(len(findings)), "toy_share": 2 / 3})


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(registry.ANALYZERS, "toy", f"{__name__}:CountingToy")  # the one registry line
    yield


def review(tmp_path: Path, *args: str) -> Any:
    from bot.entry import main

    patch = tmp_path / "change.diff"
    patch.write_text(PATCH, encoding="utf-8")
    return CliRunner().invoke(main, ["review", str(patch), "--quiet", *args], catch_exceptions=False)


@pytest.mark.usefixtures("toy")
def test_the_registry_answers_what_the_toy_declares() -> None:
    assert registry.runs_code("toy") and not registry.runs_code("editing_rtc")
    assert "toy" in registry.turned_on_by_test_command()
    assert registry.labels()["toy_lines"] == "lines the toy counted" and "toy_lines" in registry.count_scores()
    assert registry.title("toy") == "CountingToy"


@pytest.mark.usefixtures("toy")
def test_the_review_runs_the_toy_and_prints_its_headline_and_its_words(tmp_path: Path) -> None:
    out = review(tmp_path, "--analyzers", "toy", "--format", "markdown")
    assert out.exit_code == 0, out.output
    assert HEADLINE in out.output  # its headline, from the analyzer
    # its scores in its words: the count whole, the fraction with two decimals
    assert "lines the toy counted 3" in out.output and "share the toy liked 0.67" in out.output
    assert "toy_lines" not in out.output and "toy lines" not in out.output  # never the raw key
    text = review(tmp_path, "--analyzers", "toy", "--format", "text")
    assert text.exit_code == 0 and HEADLINE in text.output and "CountingToy" in text.output
    # the figures are how it was measured: in text, with --verbose (issue #47)
    assert "lines the toy counted 3 · share the toy liked 0.67" not in text.output
    verbose = review(tmp_path, "--analyzers", "toy", "--format", "text", "--verbose")
    assert "lines the toy counted 3 · share the toy liked 0.67" in verbose.output


@pytest.mark.usefixtures("toy")
def test_a_test_command_turns_the_toy_on(tmp_path: Path) -> None:
    """With the default analyzers turned off by the file (so that no model is needed), the toy
    runs only when a test command is given."""
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text("analyzers:\n" + "".join(f"  {n}: off\n" for n in registry.PATCH_DEFAULTS
                                            if n != "toy") + "  synthesis_rtc: off\n", encoding="utf-8")
    on = review(tmp_path, "--config", str(cfg), "--test-command", "make test", "--format", "text")
    assert on.exit_code == 0, on.output
    assert HEADLINE in on.output
    off = review(tmp_path, "--config", str(cfg), "--format", "text")
    assert HEADLINE not in off.output and "CountingToy" not in off.output


@pytest.mark.usefixtures("toy")
def test_the_action_on_pull_request_target_leaves_out_what_runs_code(tmp_path: Path) -> None:
    """`runs_code = True` on the toy alone: on `pull_request_target` the Action drops it and
    names it by its title; on `pull_request` it runs."""
    from bot.action.workflow import PullRequest, plan, read_inputs

    pr = PullRequest("o", "r", 1, head_sha="h" * 40, base_sha="b" * 40)

    def planned(event: str) -> Any:
        inputs = read_inputs(event, analyzers="toy", fail_on="", config="", test_command="")
        return plan(inputs, pr, None, workspace=tmp_path, tools=Tools())

    target = planned("pull_request_target")
    assert target.names == []
    assert "nothing from it runs (no test command, no CountingToy)" in " ".join(target.notes)
    assert planned("pull_request").names == ["toy"]


def test_the_registered_analyzers_agree_on_the_words_of_a_key_they_share() -> None:
    """Two analyzers that report one key (the round trip's `rtc`, `lift`, ...) call it the same,
    so a reader meets one word for it whichever analyzer's report it is."""
    said: dict[str, set[str]] = {}
    for name in registry.ANALYZERS:
        for key, words in getattr(registry.get(name), "labels", {}).items():
            said.setdefault(key, set()).add(words)
    assert said["rtc"] == {"RTC"} and said["rel"] == {"relevance"}
    assert not {k: w for k, w in said.items() if len(w) > 1}


def test_the_defaults_the_registry_names_are_what_they_say() -> None:
    """The App's comment analyzers read review comments; what `rtcbot review` runs on a patch
    alone reads none (it has only the diff)."""
    assert registry.DEFAULT_COMMENT_ANALYZERS
    assert all(registry.reads_comments(n) for n in registry.DEFAULT_COMMENT_ANALYZERS)
    assert not any(registry.reads_comments(n) for n in registry.PATCH_DEFAULTS)


class Undeclared:  # not an AnalyzerInfo: what it declares is nowhere the type checker sees
    name = "undeclared"
    title = "Undeclared"


def test_a_class_that_is_not_an_analyzer_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry line naming a class outside AnalyzerInfo is refused with the line it came from,
    never read through defaults (a misspelt declaration would fall back silently)."""
    monkeypatch.setitem(registry.ANALYZERS, "undeclared", f"{__name__}:Undeclared")
    with pytest.raises(registry.NotAnAnalyzer, match=f"{__name__}:Undeclared is not an analyzer"):
        registry.get("undeclared")
