"""The reporter seam: a target, the Reporter protocol and the registry of outputs.

A reporter turns AnalyzerReports into one output (check runs, workflow commands, the step
summary, SARIF, text / JSON / Markdown). Every surface drives reporters the same way:

    reporter.start(target, {analyzer name: title})   # before the analyses (e.g. open check runs)
    reporter.publish(report)                          # once per AnalyzerReport, as each ends
    reporter.finish(outcome)                          # after the last: how the run ended, for
                                                      # those that show it; then `flush` (write
                                                      # files, print)
    reporter.abandon(why)                             # instead, when the run stops unfinished

A new output is one module here, one line in REPORTERS and its test: every surface builds its
reporters by name (`reporters_named(names, sinks)`; the App's RTCBOT_REPORTERS, the Action's `reporters`
input, `rtcbot review --format` for those that need only a stream), handing them the same
`Sinks` — the GitHub client, the stream, the files, the review comments already read — of
which each takes what it needs in `from_sinks`. What the reports are about is the `Target`:
the pull request's head and the lines its diff shows (reporters/diff_filter.py, computed once
by the caller). Reporters import no web or queue code (import-linter holds them to it).
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar, Self

from analyzers.report import AnalyzerReport
from reporters.diff_filter import DiffFilter


@dataclass(frozen=True)
class Target:
    """What the reports are about: a pull request head (repo "" and number None offline) and
    the lines its diff shows (`diff`, computed once by the caller; None: no diff, offline)."""

    repo: str = ""  # owner/name
    number: int | None = None  # the pull request
    head_sha: str = ""
    title: str = ""  # the pull request's title
    url: str = ""
    fork: bool = False
    diff: DiffFilter | None = None


@dataclass(frozen=True)
class Sinks:
    """What a surface can hand its reporters to write to; each reporter takes what it needs
    (`from_sinks`) and says which setting gives what it lacks."""

    github: Any = None  # a GitHub client (bot.github's): check runs, reviews, comments
    stream: IO[str] | None = None  # the terminal, or the workflow's log
    step_summary: Path | None = None  # GITHUB_STEP_SUMMARY
    outputs: Path | None = None  # GITHUB_OUTPUT
    sarif: Path | None = None  # the SARIF file to write
    notes: tuple[str, ...] = ()  # said at the top of every report (e.g. settings not honoured)
    suggestions: str = "verified"  # the repository's `suggestions`: off | verified | all
    # the pull request's review comments as GitHub lists them, already read by the caller
    # (called when a reporter needs them: the pr-review reporter's markers)
    review_comments: Callable[[], Sequence[Mapping[str, Any]]] | None = None


class Reporter:
    """Every output subclasses it: what it must say (`name`, `from_sinks`, `start`, `publish`,
    `flush`) and what it may (`conclude`, `abandon`, `published`), declared once with their
    defaults; `finish` ends the lifecycle the same way for every reporter."""

    name: ClassVar[str]  # its key in REPORTERS

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> Self:
        """The reporter on what it needs of `sinks` (ReporterError names what is missing)."""
        raise NotImplementedError(f"{cls.__name__} does not say what it needs")

    def start(self, target: Target, analyzers: Mapping[str, str]) -> None:
        """Before the analyses: `analyzers` maps each name to its display title."""

    def publish(self, report: AnalyzerReport) -> Any:
        """One analyzer's report, as soon as it is done."""

    def flush(self) -> Any:
        """After the last report: write or print what was held back."""

    def finish(self, outcome: Any = None) -> Any:
        """After the last report: `outcome` (how the run ended) to a reporter that shows it,
        then what `flush` gives."""
        if outcome is not None:
            self.conclude(outcome)
        return self.flush()

    def abandon(self, why: str) -> None:
        """The run stopped before its reports: close what `start` opened (nothing, by default)."""

    def conclude(self, outcome: Any) -> None:
        """How the run ended, for a reporter that shows it (the step summary); others take none."""
        raise TypeError(f"the {self.name} reporter takes no outcome")

    def published(self) -> list[dict[str, Any]] | None:
        """What it published that a person can apply, when it keeps a record (the pr-review
        reporter's suggestions, for feedback); None: it keeps none."""
        return None


# name → "module:class"; a new output is one line here
REPORTERS: dict[str, str] = {
    "check-runs": "reporters.check_run:CheckRunReporter",
    "workflow-commands": "reporters.workflow_commands:WorkflowCommandsReporter",
    "step-summary": "reporters.step_summary:StepSummaryReporter",
    "outputs": "reporters.step_summary:OutputsReporter",
    "sarif": "reporters.sarif:SarifReporter",
    "pr-review": "reporters.pr_review:PullRequestReviewReporter",
    "text": "reporters.markdown:TextReporter",
    "json": "reporters.markdown:JsonReporter",
    "markdown": "reporters.markdown:MarkdownReporter",
}

# the formats a command line prints: name → "module:function(reports) -> str"
FORMATS: dict[str, str] = {
    "text": "reporters.markdown:render_text",
    "json": "reporters.markdown:render_json",
    "markdown": "reporters.markdown:render_markdown",
    "sarif": "reporters.sarif:render_sarif",
    "github-review": "reporters.pr_review:render_review",
}


def run_reporter(reporter: Reporter, target: Target, analyzers: Mapping[str, str],
                 reports: Sequence[AnalyzerReport], outcome: Any = None) -> Any:
    """Drive one reporter through a finished run — start, publish each report, flush — and
    return what `flush` gives. `outcome`: how the run ended, for the reporters that show it
    (they have `conclude`, e.g. the step summary)."""
    reporter.start(target, analyzers)
    for report in reports:
        reporter.publish(report)
    return reporter.finish(outcome)


class Collecting(Reporter):
    """A reporter that writes everything at the end: it keeps the run's target and reports,
    and its `flush` renders them."""

    def __init__(self) -> None:
        self.target = Target()
        self.reports: list[AnalyzerReport] = []

    def start(self, target: Target, analyzers: Mapping[str, str]) -> None:
        self.target, self.reports = target, []

    def publish(self, report: AnalyzerReport) -> None:
        self.reports.append(report)


class UnknownReporter(ValueError):
    pass


class ReporterError(ValueError):
    """A reporter lacks what it writes to (e.g. the SARIF reporter without a path)."""


def failure(e: BaseException) -> str:
    """A reporter's failure on one line, its type always named (an `AssertionError` has no
    message): how every surface says that an output failed."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def need(value: Any, reporter: str, what: str) -> Any:
    """`value`, or ReporterError saying that `reporter` needs `what`."""
    if value is None:
        raise ReporterError(f"the {reporter} reporter needs {what}")
    return value


def _load(target: str) -> Any:
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def reporter_class(name: str) -> type[Reporter]:
    """The class of the reporter `name` (UnknownReporter names the known ones)."""
    target = REPORTERS.get(name)
    if target is None:
        raise UnknownReporter(f"unknown reporter {name!r} (known: {', '.join(REPORTERS)})")
    cls = _load(target)
    if not (isinstance(cls, type) and issubclass(cls, Reporter)):
        raise TypeError(f"{target} is not a reporter (reporters/base.py Reporter)")
    return cls


def reporter_names(names: Sequence[str]) -> list[str]:
    """`names` without repeats, each a known reporter (UnknownReporter otherwise)."""
    for name in names:
        reporter_class(name)
    return list(dict.fromkeys(names))


PRIMARY = "check-runs"  # what every surface with GitHub publishes first, itself: never a further output


def further_outputs(names: Sequence[str]) -> list[str]:
    """The further outputs `names` ask for (the App's RTCBOT_REPORTERS, the Action's `reporters`
    input): each known once (UnknownReporter otherwise), the check runs left out — the surface
    publishes those itself, and would open them twice."""
    return [n for n in reporter_names(names) if n != PRIMARY]


def reporters_named(names: Sequence[str], sinks: Sinks) -> list[Reporter]:
    """The reporters `names`, in order, each on what it needs of `sinks`."""
    return [reporter_class(name).from_sinks(sinks) for name in reporter_names(names)]


def printable() -> list[str]:
    """The names a command line prints by: FORMATS, then each reporter that needs only a stream."""
    out = list(FORMATS)
    for name in REPORTERS:
        if name not in out:
            try:
                reporter_class(name).from_sinks(Sinks(stream=io.StringIO()))
            except (ReporterError, ImportError):
                continue
            out.append(name)
    return out


# the FORMATS that open with the verdict (reporters/verdict.py): their function takes the gate's state
VERDICT_FORMATS = ("text", "json", "markdown", "github-review")


def render(reports: list[AnalyzerReport], fmt: str, gate: Any = None, *, verbose: bool = False) -> str:
    """`reports` in the printable format `fmt`: one of FORMATS, or a reporter that writes to a
    stream (driven offline, what it prints). `gate`: the gate's state (reporters/verdict.py
    `Gate`) for the formats that open with the verdict; `verbose`: the text format shows how
    it was measured (the model's figures and notes)."""
    target = FORMATS.get(fmt)
    if target is not None:
        fn = _load(target)
        if fmt == "text":
            return str(fn(reports, gate=gate, verbose=verbose))
        return str(fn(reports, gate=gate) if fmt in VERDICT_FORMATS else fn(reports))
    if fmt not in printable():
        raise UnknownReporter(f"unknown format {fmt!r} (known: {', '.join(printable())})")
    stream = io.StringIO()
    run_reporter(reporter_class(fmt).from_sinks(Sinks(stream=stream)), Target(),
                 {r.name: r.title for r in reports}, reports)
    return stream.getvalue().rstrip("\n")
