"""The analyzers rtcbot knows, by name. A new analyzer is one module and one line here: what
it says of itself (its title, help, options, headline, dashboard) is read from its class, so
reporters/ and bot/ name no analyzer."""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from analyzers.context import Tools
from analyzers.info import TEST_COMMAND as TEST_COMMAND
from analyzers.info import AnalyzerInfo
from analyzers.options import AnalyzerOptions, OptionsError, validate
from analyzers.presentation import DashboardData, Panel, Regenerations
from analyzers.report import AnalyzerReport, Finding

log = logging.getLogger(__name__)
AHEAD_WAIT_S = 2.0  # the longest the work ahead waits for a first LLM request (a run may make none)
Analyzer = AnalyzerInfo  # every analyzer subclasses it (analyzers/info.py: what it may declare)


ANALYZERS: dict[str, str] = {
    "editing_rtc": "analyzers.editing_rtc.analyzer:EditingRTC",
    "crscore": "analyzers.crscore.analyzer:CRScoreAnalyzer",
    "autofix": "analyzers.autofix.analyzer:AutoFix",
    "synthesis_rtc": "analyzers.synthesis_rtc.analyzer:SynthesisRTCAnalyzer",
    "review": "analyzers.review.analyzer:ReviewAnalyzer",
}
DEFAULT_ANALYZERS: tuple[str, ...] = ("editing_rtc", "crscore", "autofix")
# what the App runs on review comments (RTCBOT_COMMENT_ANALYZERS): analyzers that read them
# (named here, not found by importing every analyzer when settings load)
DEFAULT_COMMENT_ANALYZERS: tuple[str, ...] = ("crscore",)
# what `rtcbot review` runs on a change alone (no --analyzers): it needs nothing but the diff
PATCH_DEFAULTS: tuple[str, ...] = ("editing_rtc",)


class UnknownAnalyzer(ValueError):
    pass


def normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def parse_names(spec: str) -> list[str]:
    """'editing-rtc,crscore' → ['editing_rtc', 'crscore']; 'all' → every analyzer."""
    names = [normalise(n) for n in spec.split(",") if n.strip()]
    if names == ["all"]:
        return list(ANALYZERS)
    bad = [n for n in names if n not in ANALYZERS]
    if bad:
        known = ", ".join(n.replace("_", "-") for n in ANALYZERS)
        raise UnknownAnalyzer(f"unknown analyzer {bad[0]!r} (known: {known})")
    return names


class NotAnAnalyzer(TypeError):
    """A registry line names a class that does not subclass AnalyzerInfo."""


def _class(name: str) -> type[AnalyzerInfo]:
    target = ANALYZERS.get(normalise(name))
    if target is None:
        raise UnknownAnalyzer(f"unknown analyzer {name!r}")
    module, attr = target.split(":")
    cls = vars(importlib.import_module(module)).get(attr)
    if not (isinstance(cls, type) and issubclass(cls, AnalyzerInfo)):
        raise NotAnAnalyzer(f"{target} is not an analyzer (analyzers/info.py AnalyzerInfo)")
    return cls


def _known(name: str) -> type[AnalyzerInfo]:
    """The class of the analyzer `name`, or AnalyzerInfo's defaults: it is not registered here,
    or its optional dependencies are missing (it could not run)."""
    try:
        return _class(name)
    except (UnknownAnalyzer, ImportError):
        return AnalyzerInfo


def _installed() -> list[tuple[str, type[AnalyzerInfo]]]:
    """(name, class) of every registered analyzer, in registry order (one whose optional
    dependencies are missing is left out: it could not run)."""
    out = []
    for name in ANALYZERS:
        try:
            out.append((name, _class(name)))
        except ImportError:
            continue
    return out


def get(name: str) -> AnalyzerInfo:
    return _class(name)()


def unanalysed_words(name: str) -> tuple[str, str]:
    """(verb, noun) for what the analyzer `name` could not analyse: ("analyse", "item") unless
    it says otherwise (AutoFix: "scan", "changed file")."""
    return _known(name).unanalysed_words


def reads_comments(name: str) -> bool:
    """Whether the analyzer `name` declares that it reads review comments."""
    return _class(name).reads_comments


def posts_comments(name: str) -> bool:
    """Whether the findings of the analyzer `name` that carry no fix are review comments to post
    (it declares `posts_comments = True`; the pr-review reporter posts them)."""
    return _known(name).posts_comments


def comment_readers() -> list[str]:
    """Every registered analyzer that reads review comments (one whose optional dependencies
    are missing is left out: it could not run)."""
    return [name for name, cls in _installed() if cls.reads_comments]


def headline(report: AnalyzerReport) -> str | None:
    """The sentence the report's analyzer says its main figure in (None: it says none of this
    report, or it is not registered here: the reader's generic words apply)."""
    return _known(report.name).headline(report)


def advice(f: Finding) -> str | None:
    """What a pull request's author does with finding `f`, in a few words, as its analyzer says
    (`advice(finding) -> str | None`); None: nothing to do, or the analyzer says nothing."""
    return _known(f.analyzer).advice(f)


def noun(name: str) -> tuple[str, str]:
    """What the analyzer `name`'s findings are, singular and plural: ("finding", "findings")
    unless it says (EditingRTC: ("hunk", "hunks")), so a count says what it counts."""
    return _known(name).counts


Dashboard = Callable[[DashboardData], Panel]


def dashboards() -> list[tuple[str, str, Dashboard]]:
    """(name, title, its dashboard) of every registered analyzer that draws one, in registry
    order (one whose optional dependencies are missing is left out)."""
    return [(name, cls.title, cls.dashboard) for name, cls in _installed() if cls.draws_dashboard()]


def help_text(name: str) -> str:
    """What the analyzer `name` measures, in its own words ("" when it says nothing)."""
    return _class(name).help


def options_type(name: str) -> type[AnalyzerOptions]:
    """The Options type the analyzer `name` declares."""
    return _class(name).options_type


def validate_options(name: str, raw: Any, tools: Tools | None = None) -> AnalyzerOptions:
    """The analyzer's typed options from a repository's mapping (OptionsError: one line per
    problem, each with its key path `options.<name>.<key>`)."""
    key = normalise(name)
    if key not in ANALYZERS:
        raise OptionsError([f"options.{name}: unknown analyzer (known: {', '.join(ANALYZERS)})"])
    return validate(options_type(key), raw, key, tools if tools is not None else Tools())


def validate_all(options: Mapping[Any, Any], tools: Tools | None = None
                 ) -> tuple[dict[str, AnalyzerOptions], list[str]]:
    """Every analyzer's options in `options` ({analyzer: {key: value}}): (the valid ones by
    normalised name, the problems of the others)."""
    valid: dict[str, AnalyzerOptions] = {}
    problems: list[str] = []
    for name, raw in options.items():
        if not isinstance(name, str):
            problems.append(f"options.{name!r}: analyzer names are strings")
            continue
        try:
            valid[normalise(name)] = validate_options(name, raw, tools)
        except OptionsError as e:
            problems += e.problems
    return valid, problems


# ---------------------------------------------------------------------------- declarations
def runs_code(name: str) -> bool:
    """Whether the analyzer `name` runs the pull request's code (the repository's tests): it
    declares `runs_code = True`. Surfaces that never run a pull request's code leave it out."""
    return _known(name).runs_code


def turned_on_by_test_command() -> list[str]:
    """The analyzers a test command turns on (each declares `turned_on_by = TEST_COMMAND`)."""
    return [name for name, cls in _installed() if cls.turned_on_by == TEST_COMMAND]


def title(name: str) -> str:
    """The analyzer's display title ("EditingRTC"); its name when it is not registered here."""
    cls = _known(name)
    return name if cls is AnalyzerInfo else cls.title


def needs(names: Iterable[str]) -> list[str]:
    """The tools the analyzers `names` need beside the LLM (each declares `needs = (...)`), each
    once, in first-declared order: what `rtcbot doctor` checks."""
    out: list[str] = []
    for name in names:
        out += [t for t in _known(name).needs if t not in out]
    return out


def warm_up(names: Iterable[str], tools: Tools) -> None:
    """Each of the analyzers `names` pays its one-off start-up costs (its `ahead` and `warm_up`)."""
    for name in names:
        _known(name).ahead(tools)
        _known(name).warm_up(tools)


def start_ahead(names: Iterable[str], tools: Tools, after: threading.Event | None = None,
                wait_s: float = AHEAD_WAIT_S) -> threading.Thread:
    """Each of the analyzers `names` does its `ahead` work, in one background thread started
    now, once `after` is set (at most `wait_s` later): at the start of a review, after the
    process's first LLM request went out (a fresh process's CPU goes first to what the first
    requests need), so that its first pull request (`rtcbot review`, the Action) pays those
    start-ups while the model answers, not after. A failure there is logged and left for the
    analyzer's run to meet."""
    todo = list(names)

    def work() -> None:
        if after is not None:
            after.wait(wait_s)
        for name in todo:
            try:
                _known(name).ahead(tools)
            except Exception:  # the run meets it again, and reports it as its own
                log.warning("analyzer %s: its work ahead of the run failed", name, exc_info=True)

    thread = threading.Thread(target=work, name="analyzers-ahead", daemon=True)
    thread.start()
    return thread


def labels() -> dict[str, str]:
    """Score key → what a reader calls it, as the analyzers declare (`labels`); the first
    analyzer's words win where two declare one key (tests hold them equal)."""
    out: dict[str, str] = {}
    for _, cls in _installed():
        for key, words in cls.labels.items():
            out.setdefault(key, words)
    return out


def measures(name: str) -> str | None:
    """What the analyzer `name`'s figures measure and what a good value is, in one sentence, as
    it declares (`measures`); None: it says nothing."""
    return _known(name).measures


def count_scores() -> frozenset[str]:
    """The score keys that count things (shown whole), as the analyzers declare (`count_scores`)."""
    return frozenset(key for _, cls in _installed() for key in cls.count_scores)


def in_review(name: str, n: int, first: bool) -> str | None:
    """What a pull request review says of the `n` fixes or comments of the analyzer `name` it
    carries (`first`: the review's opening sentence); None: the analyzer says nothing."""
    return _known(name).in_review(n, first)


def fix_note(f: Finding) -> str | None:
    """What the comment that suggests finding `f`'s fix says of the checks it passed, as its
    analyzer says (None: it says nothing)."""
    return _known(f.analyzer).fix_note(f)


def comment_note(f: Finding) -> tuple[str, list[str]] | None:
    """The analyzer's words under its posted comment `f` (its figures), and the model-written
    texts it is about, for the reporter to quote inert (None: it says nothing)."""
    return _known(f.analyzer).comment_note(f)


def regenerations(f: Finding) -> Regenerations | None:
    """The code the model of finding `f`'s analyzer wrote back for it, as that analyzer reads
    its own evidence (None: it wrote none, or its analyzer says nothing of it)."""
    return _known(f.analyzer).regenerations(f)
