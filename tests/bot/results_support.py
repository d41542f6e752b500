"""An analysis reviewed and published the way the App's worker does it (bot/app/analysis.py):
the core's `execute` over the pull request's files, with the App's outputs (bot/app/results.py
`outputs`: the check run, then the further reporters). Its analyzer is the registered one with
only its `run` replaced by a report the test wrote (`scripted`), so that every other thing it
declares is its own."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from analyzers import registry
from analyzers.context import Tools
from analyzers.report import AnalyzerReport
from bot.app.events import AnalyzeJob
from bot.app.results import Published, outputs
from bot.core import review
from bot.core.checks import CheckRuns, CheckRunsOutput
from bot.core.config import LoadedConfig
from bot.core.context import Selection, changes_from_github
from bot.github import GitHub
from reporters.base import Target


def scripted(monkeypatch: pytest.MonkeyPatch, report: AnalyzerReport) -> None:
    """The analyzer `report.name` answers `report`, for this test only (its registry line)."""
    base = type(registry.get(report.name))
    cls = type(f"Scripted{base.__name__}", (base,), {"run": lambda self, changes, ctx: report})
    monkeypatch.setattr(sys.modules[__name__], "Scripted", cls, raising=False)
    monkeypatch.setitem(registry.ANALYZERS, report.name, f"{__name__}:Scripted")


def review_as_the_worker(gh: GitHub, checks: CheckRuns, job: AnalyzeJob, found: int | None, *,
                         extra: Sequence[str] = (),
                         review_comments: Callable[[], Sequence[dict[str, Any]]] | None = None,
                         on_published: Published | None = None) -> tuple[review.Result, CheckRunsOutput]:
    """The job's analyzer on its pull request's files through `execute` with the App's outputs
    (`found`: its check run's id, as `CheckRuns.existing` found it); the Result and the check
    runs' output, which says what it sent."""
    loaded = LoadedConfig()
    change = review.Change(changes_from_github(gh.pr_files(job.repo, job.pr_number or 0), loaded))
    runs, more = outputs(gh, checks, job, found, extra=extra, review_comments=review_comments,
                         on_published=on_published)
    settings = review.Settings(Tools(), lambda _: Selection(names=[job.analyzer]), lambda model: None)
    result = review.execute(review.Read(loaded, change), [runs, more], settings,
                            target=Target(repo=job.repo, number=job.pr_number, head_sha=job.head_sha))
    return result, runs
