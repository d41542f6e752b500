"""The analyzers rtcbot knows, by name. A new analyzer is one module and one line here: what
it says of itself (its title, help, options, headline, dashboard) is read from its class, so
reporters/ and bot/ name no analyzer."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, Tools
from analyzers.options import AnalyzerOptions, OptionsError, validate
from analyzers.presentation import DashboardData, Panel
from analyzers.report import AnalyzerReport, Finding


class Analyzer(Protocol):
    name: str  # machine name, e.g. "editing_rtc"
    title: str  # display title (check-run name after "rtcbot / "), e.g. "EditingRTC"
    help: str  # one or two sentences: what its findings and scores mean (SARIF rule help, docs)
    options_type: type[AnalyzerOptions]  # what `options: {<name>: ...}` may set
    # optional: `reads_comments = True` when it scores the pull request's review comments
    # (the context builders fetch them only for such analyzers; see comment_readers());
    # `posts_comments = True` when its findings without a fix are review comments to post
    # optional: `languages`, the languages it analyses (a file in another one that could not be
    # read is not its to miss); `unanalysed_words = (verb, noun)`, e.g. ("scan", "changed file"),
    # how a gate says what it could not analyse (see unanalysed_words())
    # optional: `counts = (singular, plural)`, what its findings are: ("hunk", "hunks") (see noun());
    # optional: `headline(report) -> str | None`, its main figure in one sentence (see headline());
    # `advice(finding) -> str | None`, what the PR's author does with a finding (see advice());
    # `dashboard(DashboardData) -> Panel`, its part of the App's dashboard (see dashboards());
    # both described in analyzers/presentation.py

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport: ...


ANALYZERS: dict[str, str] = {
    "editing_rtc": "analyzers.editing_rtc.analyzer:EditingRTC",
    "crscore": "analyzers.crscore.analyzer:CRScoreAnalyzer",
    "autofix": "analyzers.autofix.analyzer:AutoFix",
    "synthesis_rtc": "analyzers.synthesis_rtc.analyzer:SynthesisRTCAnalyzer",
    "review": "analyzers.review.analyzer:ReviewAnalyzer",
}
DEFAULT_ANALYZERS: tuple[str, ...] = ("editing_rtc", "crscore", "autofix")


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


def _class(name: str) -> Any:
    target = ANALYZERS.get(normalise(name))
    if target is None:
        raise UnknownAnalyzer(f"unknown analyzer {name!r}")
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def get(name: str) -> Analyzer:
    return _class(name)()  # type: ignore[no-any-return]


def unanalysed_words(name: str) -> tuple[str, str]:
    """(verb, noun) for what the analyzer `name` could not analyse: ("analyse", "item") unless
    it says otherwise (AutoFix: "scan", "changed file")."""
    try:
        words = getattr(_class(name), "unanalysed_words", None)
    except UnknownAnalyzer:
        words = None
    return (str(words[0]), str(words[1])) if words else ("analyse", "item")


def reads_comments(name: str) -> bool:
    """Whether the analyzer `name` declares that it reads review comments."""
    return bool(getattr(_class(name), "reads_comments", False))


def posts_comments(name: str) -> bool:
    """Whether the findings of the analyzer `name` that carry no fix are review comments to post
    (it declares `posts_comments = True`; the pr-review reporter posts them)."""
    try:
        return bool(getattr(_class(name), "posts_comments", False))
    except (UnknownAnalyzer, ImportError):
        return False


def comment_readers() -> list[str]:
    """Every registered analyzer that reads review comments (one whose optional dependencies
    are missing is left out: it could not run)."""
    out = []
    for name in ANALYZERS:
        try:
            if reads_comments(name):
                out.append(name)
        except ImportError:
            continue
    return out


def _says(name: str, what: str, of: Any) -> str | None:
    """What the analyzer `name`'s optional `what(of)` says (None: it says nothing of `of`, it
    declares no such words, or it is not registered here)."""
    try:
        words = getattr(_class(name), what, None)
    except (UnknownAnalyzer, ImportError):
        return None
    said = words(of) if words is not None else None
    return str(said) if said is not None else None


def headline(report: AnalyzerReport) -> str | None:
    """The sentence the report's analyzer says its main figure in (None: it says none of this
    report, or it is not registered here: the reader's generic words apply)."""
    return _says(report.name, "headline", report)


def advice(f: Finding) -> str | None:
    """What a pull request's author does with finding `f`, in a few words, as its analyzer says
    (`advice(finding) -> str | None`); None: nothing to do, or the analyzer says nothing."""
    return _says(f.analyzer, "advice", f)


def noun(name: str) -> tuple[str, str]:
    """What the analyzer `name`'s findings are, singular and plural: ("finding", "findings")
    unless it says (EditingRTC: ("hunk", "hunks")), so a count says what it counts."""
    try:
        words = getattr(_class(name), "counts", None)
    except (UnknownAnalyzer, ImportError):
        words = None
    return (str(words[0]), str(words[1])) if words else ("finding", "findings")


Dashboard = Callable[[DashboardData], Panel]


def dashboards() -> list[tuple[str, str, Dashboard]]:
    """(name, title, its dashboard) of every registered analyzer that draws one, in registry
    order (one whose optional dependencies are missing is left out)."""
    out = []
    for name in ANALYZERS:
        try:
            cls = _class(name)
        except ImportError:
            continue
        draw = getattr(cls, "dashboard", None)
        if draw is not None:
            out.append((name, str(cls.title), draw))
    return out


def help_text(name: str) -> str:
    """What the analyzer `name` measures, in its own words ("" when it says nothing)."""
    return str(getattr(_class(name), "help", ""))


def options_type(name: str) -> type[AnalyzerOptions]:
    """The Options type the analyzer `name` declares."""
    cls: type[AnalyzerOptions] = _class(name).options_type
    return cls


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
