"""What an analyzer says about itself beyond its findings: the shapes of its headline and of
its part of the App's dashboard. Pure data; no Flask, no database, no charts library.

An analyzer may declare (on analyzers/info.py `AnalyzerInfo`, whose defaults apply when it does not):

    headline(report) -> str | None      one sentence with its main figure, in words (None:
                                        the generic "<first score> <value>")
    dashboard(data: DashboardData) -> Panel
                                        its charts, totals and tables on a repository's page,
                                        from its own completed check runs (each pull request's
                                        newest head), their findings and its published
                                        suggestions
    labels = {key: words}               what a reader calls its scores ("rel": "relevance");
    count_scores = (key, ...)           those of them that count things (shown whole)
    in_review(n, first) -> str          what a pull request review says of the n fixes or
                                        comments of it that it carries (first: the review's
                                        opening sentence, else one that follows it)
    fix_note(finding) -> str            under a suggested fix: the checks it passed or not
    comment_note(finding) -> (str, [str])
                                        under a posted comment: its words (its figures), and
                                        the model-written texts it is about, which the
                                        reporter quotes inert

so that reporters/ and the dashboard (bot/app/dashboard/) name no analyzer: a new analyzer is
one module and one registry line.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class Regenerations:
    """The code a model wrote back for a finding, each under the description it came from
    (`descriptions[i]` for `regenerated[i]`; fewer descriptions than regenerations: the rest
    had none), and what it wrote from the uninformative baseline description (None: no
    baseline). What `explain` diffs against the real edit; an analyzer says it (`regenerations`)."""

    regenerated: list[str]
    descriptions: list[str] = field(default_factory=list)
    baseline: str | None = None


# ---------------------------------------------------------------------------- rows (plain data)
@dataclass(frozen=True)
class Run:
    """A completed check run (the store's check_runs row, as plain data)."""

    id: int
    name: str
    head_sha: str
    pr_number: int | None
    scores: Mapping[str, Any]
    github_id: int | None
    updated_at: float
    conclusion: str | None = None


@dataclass(frozen=True)
class Item:
    """A finding of a check run (a hunk, a review comment, a Semgrep finding)."""

    run_id: int
    path: str | None
    start_line: int | None
    end_line: int | None
    scores: Mapping[str, Any]
    title: str = ""
    inconclusive: str = ""  # the Inconclusive reason's value when its evidence says nothing of the change


@dataclass(frozen=True)
class Suggestion:
    """Something published that a person can apply (the `published` table)."""

    analyzer: str
    created_at: float
    applied: bool


class Links(Protocol):
    """Links the dashboard makes (on the App's GitHub, at the run's head)."""

    def run(self, run: Run) -> str | None: ...

    def pull(self, number: int | None) -> str | None: ...

    def lines(self, run: Run, path: str | None, start: int | None, end: int | None) -> str | None: ...


@dataclass(frozen=True)
class DashboardData:
    """One analyzer's rows for one repository's page: its check runs (each pull request's
    newest head, by PR number), their findings and its published suggestions."""

    repo: str
    runs: Sequence[Run]
    items: Sequence[Item]
    suggestions: Sequence[Suggestion]
    links: Links


# ---------------------------------------------------------------------------- what it shows
ChartKind = Literal["bars+points", "lines", "boxes", "grouped-bars"]


@dataclass(frozen=True)
class Chart:
    """One chart, as data (bot/app/dashboard/charts.py draws it). `values` are rows; `x` and
    `y` name their fields; `series` the field that colours (and, for boxes and grouped bars,
    sets side by side) the marks, in `order`; `points` the field drawn as diamonds over the
    bars of "bars+points"."""

    key: str  # the page's id for it (#chart-<key>)
    title: str
    label: str  # its accessible name: what it shows, in a sentence
    kind: ChartKind
    values: list[dict[str, Any]]
    x: str
    x_title: str
    y: str
    y_title: str
    series: str = ""
    order: tuple[str, ...] = ()
    points: str = ""
    y_domain: tuple[float, float] | None = None


@dataclass(frozen=True)
class Cell:
    text: str
    href: str | None = None
    numeric: bool = False


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: Sequence[tuple[Cell, ...]]


@dataclass(frozen=True)
class Total:
    value: str  # as shown, e.g. "0.42" or "5/10"
    label: str  # e.g. "mean EditingRTC"


@dataclass
class Panel:
    """An analyzer's part of a repository's page."""

    charts: list[Chart] = field(default_factory=list)
    totals: list[Total] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(c.values for c in self.charts) and not any(t.rows for t in self.tables)


# ---------------------------------------------------------------------------- helpers
def week(at: float) -> str:
    """The Monday (UTC) of the ISO week of `at`, as YYYY-MM-DD."""
    t = time.gmtime(at)
    monday = at - t.tm_wday * 86400
    return time.strftime("%Y-%m-%d", time.gmtime(monday))


def num(v: Any) -> float | None:
    """A stored score as a float (None: absent, or not a number)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def score(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"
