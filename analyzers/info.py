"""What an analyzer says of itself, declared once where the type checker sees it.

Every analyzer subclasses `AnalyzerInfo` and overrides what it has to say; what it leaves alone
keeps the default below, so that analyzers/registry.py reads each declaration as a typed
attribute (a misspelt one is a type error, not a silent default). Its words (`headline`,
`advice`, `in_review`, `fix_note`, `comment_note`, `dashboard`) are described in
analyzers/presentation.py; an analyzer points each at its view module's function
(`headline = staticmethod(view.headline)`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, Tools
from analyzers.options import AnalyzerOptions
from analyzers.presentation import DashboardData, Panel, Regenerations
from analyzers.report import AnalyzerReport, Finding

TEST_COMMAND = "test_command"  # what an analyzer's `turned_on_by` may say: a test command is set


class AnalyzerInfo:
    """An analyzer: its name, title, help and options, what it reads and needs, its words; and
    `run`, the analysis."""

    name: ClassVar[str]  # machine name, e.g. "editing_rtc"
    title: ClassVar[str]  # display title (check-run name after "rtcbot / "), e.g. "EditingRTC"
    help: ClassVar[str] = ""  # one or two sentences: what its findings and scores mean (SARIF, docs)
    options_type: ClassVar[type[AnalyzerOptions]] = AnalyzerOptions  # what `options: {<name>: ...}` may set
    reads_comments: ClassVar[bool] = False  # it scores the pull request's review comments (fetched for it)
    posts_comments: ClassVar[bool] = False  # its findings without a fix are review comments to post
    languages: ClassVar[Collection[str] | None] = None  # what it analyses (None: every language)
    unanalysed_words: ClassVar[tuple[str, str]] = ("analyse", "item")  # (verb, noun): what a gate
    # says it could not analyse, e.g. ("scan", "changed file")
    scans_every_path: ClassVar[bool] = False  # it costs nothing and reads every changed file,
    # whatever its path (ignore globs spare only the analyzers that ask a model: analyzers/pipeline.py)
    counts: ClassVar[tuple[str, str]] = ("finding", "findings")  # what its findings are: ("hunk", "hunks")
    measures: ClassVar[str | None] = None  # what its figures measure and what a good value is
    labels: ClassVar[Mapping[str, str]] = {}  # score key → what a reader calls it
    count_scores: ClassVar[Collection[str]] = ()  # the score keys that count things (shown whole)
    runs_code: ClassVar[bool] = False  # it runs the pull request's code (the repository's tests)
    turned_on_by: ClassVar[str | None] = None  # TEST_COMMAND: a test command turns it on
    needs: ClassVar[tuple[str, ...]] = ()  # the tools it needs beside the LLM (`rtcbot doctor`)

    @staticmethod
    def headline(report: AnalyzerReport, /) -> str | None:
        """Its main figure in one sentence (None: the reader's generic words)."""
        return None

    @staticmethod
    def advice(finding: Finding, /) -> str | None:
        """What the pull request's author does with `finding` (None: nothing to say)."""
        return None

    @staticmethod
    def in_review(n: int, first: bool, /) -> str | None:
        """What a review says of the `n` fixes or comments of it that it carries."""
        return None

    @staticmethod
    def fix_note(finding: Finding, /) -> str | None:
        """Under a suggested fix: the checks it passed or not."""
        return None

    @staticmethod
    def comment_note(finding: Finding, /) -> tuple[str, list[str]] | None:
        """Under a posted comment: its words, and the model-written texts it is about."""
        return None

    @staticmethod
    def dashboard(data: DashboardData, /) -> Panel:
        """Its part of the App's dashboard (asked only of an analyzer that overrides it: draws_dashboard())."""
        return Panel()

    @staticmethod
    def regenerations(finding: Finding, /) -> Regenerations | None:
        """The code its model wrote back for `finding`, for `explain` (None: it wrote none)."""
        return None

    @staticmethod
    def ahead(tools: Tools, /) -> None:
        """Start-up work its first run will need and that needs no change (an import): done in
        a review's background thread once its first LLM request is out (registry.start_ahead),
        and in a service's warm-up."""

    @staticmethod
    def warm_up(tools: Tools, /) -> None:
        """Pay its one-off start-up costs before a service's first job (a model, a JVM)."""

    @classmethod
    def draws_dashboard(cls) -> bool:
        """Whether it has a part of the App's dashboard: it declares its own `dashboard`."""
        return cls.dashboard is not AnalyzerInfo.dashboard

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        raise NotImplementedError(f"{type(self).__name__} does not say how it runs")
