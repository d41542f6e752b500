"""The analyzers rtcbot knows, by name. A new analyzer is one module and one line here: what
it says of itself (its title, help, options, headline, dashboard) is read from its class, so
reporters/ and bot/ name no analyzer."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
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
    # how a gate says what it could not analyse (see unanalysed_words()); `scans_every_path =
    # True` when it costs nothing and reads every changed file whatever its path (ignore globs
    # spare only the analyzers that ask a model: analyzers/pipeline.py)
    # optional: `counts = (singular, plural)`, what its findings are: ("hunk", "hunks") (see noun());
    # optional: `headline(report) -> str | None`, its main figure in one sentence (see headline());
    # `advice(finding) -> str | None`, what the PR's author does with a finding (see advice());
    # `measures`, one sentence: what its figures measure and what a good value is (see measures());
    # `dashboard(DashboardData) -> Panel`, its part of the App's dashboard (see dashboards());
    # its words in a pull request's review: `in_review(n, first)`, `fix_note(finding)`,
    # `comment_note(finding)`; all described in analyzers/presentation.py
    # optional: `labels = {score key: words}`, what a reader calls its scores, and
    # `count_scores`, those that count things (see labels(), count_scores());
    # `runs_code = True` when it runs the pull request's code (the repository's tests; see
    # runs_code()); `turned_on_by = TEST_COMMAND` when a test command turns it on (see
    # turned_on_by_test_command()); `needs = ("semgrep", ...)`, the tools it needs beside the
    # LLM, which `rtcbot doctor` checks (see needs())

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport: ...


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
TEST_COMMAND = "test_command"  # what an analyzer's `turned_on_by` may say: a test command is set


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


# ---------------------------------------------------------------------------- declarations
def _declared(name: str, what: str, default: Any = None) -> Any:
    """What the analyzer `name` declares as `what` (`default`: it declares nothing, it is not
    registered here, or its optional dependencies are missing: it could not run)."""
    try:
        return getattr(_class(name), what, default)
    except (UnknownAnalyzer, ImportError):
        return default


def _every(what: str) -> list[tuple[str, Any]]:
    """(name, what it declares) of every registered analyzer that declares `what`, in registry
    order (one whose optional dependencies are missing is left out)."""
    out = []
    for name in ANALYZERS:
        said = _declared(name, what)
        if said is not None:
            out.append((name, said))
    return out


def runs_code(name: str) -> bool:
    """Whether the analyzer `name` runs the pull request's code (the repository's tests): it
    declares `runs_code = True`. Surfaces that never run a pull request's code leave it out."""
    return bool(_declared(name, "runs_code", False))


def turned_on_by_test_command() -> list[str]:
    """The analyzers a test command turns on (each declares `turned_on_by = TEST_COMMAND`)."""
    return [name for name, by in _every("turned_on_by") if by == TEST_COMMAND]


def title(name: str) -> str:
    """The analyzer's display title ("EditingRTC"); its name when it is not registered here."""
    return str(_declared(name, "title", name))


def needs(names: Iterable[str]) -> list[str]:
    """The tools the analyzers `names` need beside the LLM (each declares `needs = (...)`), each
    once, in first-declared order: what `rtcbot doctor` checks."""
    out: list[str] = []
    for name in names:
        out += [str(t) for t in _declared(name, "needs", ()) if str(t) not in out]
    return out


def labels() -> dict[str, str]:
    """Score key → what a reader calls it, as the analyzers declare (`labels`); the first
    analyzer's words win where two declare one key (tests hold them equal)."""
    out: dict[str, str] = {}
    for _, declared in _every("labels"):
        for key, words in declared.items():
            out.setdefault(str(key), str(words))
    return out


def measures(name: str) -> str | None:
    """What the analyzer `name`'s figures measure and what a good value is, in one sentence, as
    it declares (`measures`); None: it says nothing."""
    said = _declared(name, "measures")
    return None if said is None else str(said)


def count_scores() -> frozenset[str]:
    """The score keys that count things (shown whole), as the analyzers declare (`count_scores`)."""
    return frozenset(str(key) for _, declared in _every("count_scores") for key in declared)


def in_review(name: str, n: int, first: bool) -> str | None:
    """What a pull request review says of the `n` fixes or comments of the analyzer `name` it
    carries (`first`: the review's opening sentence); None: the analyzer says nothing."""
    words = _declared(name, "in_review")
    return None if words is None else str(words(n, first))


def fix_note(f: Finding) -> str | None:
    """What the comment that suggests finding `f`'s fix says of the checks it passed, as its
    analyzer says (None: it says nothing)."""
    return _says(f.analyzer, "fix_note", f)


def comment_note(f: Finding) -> tuple[str, list[str]] | None:
    """The analyzer's words under its posted comment `f` (its figures), and the model-written
    texts it is about, for the reporter to quote inert (None: it says nothing)."""
    note = _declared(f.analyzer, "comment_note")
    if note is None:
        return None
    words, about = note(f)
    return str(words), [str(a) for a in about]
