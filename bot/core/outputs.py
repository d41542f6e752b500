"""The outputs of a review besides its check runs (bot/core/review.py `Output`): the further
outputs a surface drives by name after its check runs (`reporters` input, RTCBOT_REPORTERS),
each through a finished run, one at a time — one that fails (GitHub refuses it: a fork's
read-only token; or anything else) is reported, never fatal: the check runs hold the same
findings; one reporter driven through the finished run (`Reported`); and an output swapped
for a spare when GitHub refuses to let it start (`Fallback`: the Action's workflow commands
for check runs its token cannot create)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from analyzers.report import AnalyzerReport
from bot.core.review import Output, Result
from bot.github.errors import GitHubError
from reporters.base import Reporter, Sinks, Target, failure, render, reporters_named, run_reporter

HELD_ELSEWHERE = "the check runs and the summary hold the same findings"


@dataclass(frozen=True)
class Driven:
    """What one further output did (`said`: "pr-review: posted …", or why it failed, in a
    sentence); `reason`: its error's type and message; what it published, when it keeps a
    record of that (the pr-review reporter's suggestions, for feedback)."""

    name: str
    said: str
    ok: bool = True
    published: list[dict[str, Any]] | None = None
    reason: str = ""
    error: BaseException | None = None


def drive(names: Sequence[str], sinks: Sinks, target: Target, titles: Mapping[str, str],
          reports: list[AnalyzerReport]) -> list[Driven]:
    out = []
    for reporter in reporters_named(names, sinks):
        try:
            done = run_reporter(reporter, target, dict(titles), reports)
        except Exception as e:
            said = (f"{reporter.name}: GitHub refused it ({e.status}: {e.message}); {HELD_ELSEWHERE}"
                    if isinstance(e, GitHubError) else f"{reporter.name} failed ({failure(e)}); {HELD_ELSEWHERE}")
            out.append(Driven(reporter.name, said, False, reason=failure(e), error=e))
            continue
        out.append(Driven(reporter.name, f"{reporter.name}: {done}", published=reporter.published()))
    return out


class Further(Output):
    """The further outputs `names`, driven on `sinks` (the review's notes added) once the review
    is judged; `done` hears what each did."""

    def __init__(self, names: Sequence[str], sinks: Sinks, done: Callable[[Driven], object]) -> None:
        self.names, self.sinks, self.done = names, sinks, done
        self.titles: dict[str, str] = {}

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        self.titles = dict(titles)

    def publish(self, result: Result, target: Target) -> None:
        self.drive(target, self.titles, result.reports, result.notes)

    def drive(self, target: Target, titles: Mapping[str, str], reports: list[AnalyzerReport],
              notes: Sequence[str]) -> None:
        for done in drive(self.names, replace(self.sinks, notes=tuple(notes)), target, titles, reports):
            self.done(done)


class Reported(Output):
    """One reporter driven through the judged review; `value`: what its `flush` gave."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.titles: dict[str, str] = {}
        self.value: Any = None

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        self.titles = dict(titles)

    def publish(self, result: Result, target: Target) -> None:
        self.value = run_reporter(self.reporter, target, self.titles, result.reports)

    def abandon(self, why: str) -> None:
        self.reporter.abandon(why)


REFUSED = (403, 404)  # what GitHub answers a token that may not write there


class Fallback(Output):
    """`primary`, or `spare` from the moment GitHub refuses to let `primary` start (a token
    without the permission: `refused` hears why, and what `primary` opened is abandoned)."""

    def __init__(self, primary: Output, spare: Output, refused: Callable[[GitHubError], object]) -> None:
        self.primary, self.spare, self.refused = primary, spare, refused
        self.used = primary

    @property
    def swapped(self) -> bool:
        return self.used is self.spare

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        try:
            self.primary.start(target, titles)
        except GitHubError as e:
            if e.status not in REFUSED:
                raise
            self.refused(e)
            self.primary.abandon("this token cannot create every check run")  # what it did open
            self.used = self.spare
            self.spare.start(target, titles)

    def publish(self, result: Result, target: Target) -> None:
        self.used.publish(result, target)

    def finish(self) -> None:
        self.used.finish()

    def abandon(self, why: str) -> None:
        self.used.abandon(why)


class Unavailable(ValueError):
    """A printable format this build cannot write (its optional dependency is missing)."""


class Printed(Output):
    """The judged review in a printable format (reporters/base.py `render`) on `echo` and in
    `out` — the text format says nothing when every analyzer failed (the end says the errors)."""

    def __init__(self, fmt: str, echo: Callable[[str], object], out: Path | None = None, *,
                 verbose: bool = False) -> None:
        self.fmt, self.echo, self.out, self.verbose = fmt, echo, out, verbose

    def publish(self, result: Result, target: Target) -> None:
        try:
            text = render(result.reports, self.fmt, result.gate(), verbose=self.verbose)
        except (ImportError, AttributeError):
            raise Unavailable(f"the {self.fmt} output is not available in this build") from None
        if self.fmt != "text" or not result.all_failed:
            self.echo(text)
        if self.out:
            self.out.write_text(text, encoding="utf-8")
