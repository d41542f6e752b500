"""An analyzer's work ahead of its run (`AnalyzerInfo.ahead`, analyzers/registry.py `start_ahead`):
started in one background thread at the start of a review, which waits for the process's first
LLM request to go out: a fresh process's first pull request pays it while the model answers,
not after the answers, and not before its first requests.

The toy analyzers below live in this module only and are registered for a test with one line
each (monkeypatch puts the registry back).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, Tools
from analyzers.info import AnalyzerInfo
from analyzers.report import AnalyzerReport

ROOT = Path(__file__).resolve().parents[2]
PATCH = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
started: list[str] = []  # the thread each toy's `ahead` ran in
begun = threading.Event()  # set by the waiting toy's `ahead`


class AheadToy(AnalyzerInfo):
    name = "ahead_toy"
    title = "AheadToy"

    @staticmethod
    def ahead(tools: Tools, /) -> None:
        started.append(threading.current_thread().name)


class FailingToy(AnalyzerInfo):
    name = "failing_toy"
    title = "FailingToy"

    @staticmethod
    def ahead(tools: Tools, /) -> None:
        raise RuntimeError("no model here")


class WaitingToy(AnalyzerInfo):
    """Its run says whether its `ahead` began while the review ran (a score of 1)."""

    name = "waiting_toy"
    title = "WaitingToy"

    @staticmethod
    def ahead(tools: Tools, /) -> None:
        begun.set()

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        return AnalyzerReport(self.name, self.title, scores={"ahead_begun": float(begun.wait(10))})


@pytest.fixture(autouse=True)
def toys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, cls in (("ahead_toy", "AheadToy"), ("failing_toy", "FailingToy"), ("waiting_toy", "WaitingToy")):
        monkeypatch.setitem(registry.ANALYZERS, name, f"{__name__}:{cls}")
    started.clear()
    begun.clear()


def test_the_work_ahead_runs_in_a_thread_of_its_own_and_a_failure_is_logged_not_raised(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="analyzers.registry"):
        thread = registry.start_ahead(["failing_toy", "ahead_toy"], Tools())
        thread.join(10)
    assert not thread.is_alive() and thread.daemon  # never holds the process at its end
    assert started == ["analyzers-ahead"]  # the toy after the failing one still ran, in the thread
    assert "failing_toy" in caplog.text and "no model here" in caplog.text


def test_the_work_ahead_waits_for_the_first_llm_request_at_most_its_bound() -> None:
    sent = threading.Event()
    thread = registry.start_ahead(["ahead_toy"], Tools(), after=sent, wait_s=30)
    thread.join(0.2)
    assert started == [] and thread.is_alive()  # the first requests go first
    sent.set()
    thread.join(10)
    assert started == ["analyzers-ahead"]
    registry.start_ahead(["ahead_toy"], Tools(), after=threading.Event(), wait_s=0.05).join(10)
    assert started == ["analyzers-ahead"] * 2  # a run that makes no request: after the bound


def test_a_services_warm_up_does_the_work_ahead_too() -> None:
    registry.warm_up(["ahead_toy"], Tools())
    assert started == [threading.current_thread().name]


def test_a_review_starts_the_work_ahead_of_its_analyzers(tmp_path: Path) -> None:
    from bot.entry import main

    patch = tmp_path / "change.diff"
    patch.write_text(PATCH, encoding="utf-8")
    done = CliRunner().invoke(main, ["review", str(patch), "--analyzers", "waiting_toy", "--format", "json"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert '"ahead_begun": 1.0' in done.output


@pytest.mark.slow  # a new Python process that imports the analyzers and sacrebleu
def test_editing_rtcs_work_ahead_imports_chrf() -> None:
    """In a fresh process: chrF's package (sacrebleu, which imports redis) is imported by
    EditingRTC's `ahead`, not first by its scores after the model's answers."""
    code = ("import sys\nfrom analyzers import registry\nfrom analyzers.context import Tools\n"
            "before = 'sacrebleu.metrics.chrf' in sys.modules\n"
            "registry.start_ahead(['editing_rtc'], Tools()).join(60)\n"
            "print(before, 'sacrebleu.metrics.chrf' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
