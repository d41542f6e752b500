"""One review, the same on every surface.

The CLI (`rtcbot review`), the Action and the App's worker each read a change their own way
(a patch or git range, the pull request through a token, the pull request through the App's
installation) and publish their own way (text on stdout, check runs and a step summary, check
runs and the store). Everything between is here, once:

    plan    the analyzers, test command and model the config and the surface's settings give
            (bot/core/context.py `select`), and the model refused where the config requires a
            qualified one and the surface's record says it is not (bot/core/qualification.py);
    run     the analysis context (files, comments, tools, the one LLM factory), the analyzers,
            the work an LLM budget cut off listed in the reports, and the gate's verdict;
    dismiss the findings the repository's team dismissed (bot/core/dismissals.py: the App's
            store, the Action's and the CLI's dismissals file) taken out of every report
            before the gate (unless `gate_dismissed`) and before any surface publishes it:
            one line of the summary each, never an annotation or a suggestion;
    execute the whole of it over a surface's `Source` (where it reads the config, the
            dismissals, the qualification record and the change) and its `Output`s (one
            lifecycle: started before the change is read, given the judged Result, finished,
            or abandoned with the reason when anything raises);
    end     what the end says, as facts (`Ending`) each surface words, and one exit code: 1
            when the gate fails or every analyzer failed, 3 when a budget cut work off and the
            surface treats a partial result as its own status (the CLI), else 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Protocol

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.context import AnalysisContext, Tools
from analyzers.llm.client import REQUEST_SENT, LLMClient
from analyzers.pipeline import run_all
from analyzers.report import AnalyzerReport, Skipped
from bot.core.config import LoadedConfig
from bot.core.context import Comments, Selection, Unlisted, analysis_context
from bot.core.dismissals import Dismissal, dismiss
from bot.core.dismissals_file import LoadedDismissals
from bot.core.gate import FailOn, Verdict, judge
from bot.core.llm import refusing_factory
from bot.core.qualification import Standing
from reporters.base import Target
from reporters.diff_filter import DiffFilter
from reporters.verdict import Gate

LLMFactory = Callable[[], LLMClient]
EXIT_GATE = 1  # the gate failed (or cannot pass), or every analyzer failed
EXIT_BUDGET = 3  # an LLM budget cut work off: the result is partial
BUDGET_ITEM = "LLM budget"  # the Skipped item that lists what a budget cut off


@dataclass(frozen=True)
class Change:
    """What one review reads: the change, a file at its head, its review comments (a list or
    a callable that fetches them, called only when an analyzer reads comments), the checkout
    at its head if there is one, what the surface said about it (`notes`), and the files
    GitHub did not list (`unlisted`: its note is said, and its item is a "failed" one in every
    report, so that a gate on findings or scores cannot pass over files no analyzer saw)."""

    changes: ChangeSet
    files: Callable[[str], str | None] | None = None
    comments: Comments = ()
    checkout: Path | None = None
    notes: tuple[str, ...] = ()
    unlisted: Unlisted | None = None

    @property
    def said(self) -> tuple[str, ...]:
        """Every note about the change: the surface's, and the unlisted files'."""
        return (*self.notes, *((self.unlisted.note,) if self.unlisted is not None else ()))


@dataclass(frozen=True)
class Plan:
    """What a review will do: the config, the selection (analyzers, test command, model), the
    gate, the LLM factory, and the notes every output shows."""

    loaded: LoadedConfig
    selection: Selection
    gate: FailOn
    llm: LLMFactory | None
    notes: tuple[str, ...] = ()
    dismissals: tuple[Dismissal, ...] = ()
    unqualified: str = ""  # a record exists and does not qualify the model: its scores are inconclusive

    @property
    def names(self) -> list[str]:
        return list(self.selection.names)


def plan(loaded: LoadedConfig, selection: Selection, *, llm: LLMFactory | None, gate: FailOn | None = None,
         standing: Callable[[], Standing] | None = None, dismissals: Sequence[Dismissal] = ()) -> Plan:
    """The plan of a review. `gate`: the surface's (an input that wins over the file), else
    the file's `fail_on`; `standing`: the surface's reading of its qualification record
    (bot/core/qualification.py), asked when a model may run. Under `require_qualified: true` a
    model it does not qualify gets a factory that refuses with the reason; without it, a model a
    record exists for and does not qualify runs, and its scores are inconclusive. Either way the
    reason is a note. `dismissals`: the repository's, kept unless the config turns them off
    (`dismissals: off`)."""
    notes = list(selection.notes)
    unqualified = ""
    if llm is not None and standing is not None:
        said = standing()
        if loaded.config.require_qualified and (why := said.refusal()) is not None:
            notes.append(why)
            llm = refusing_factory(why)
        elif not loaded.config.require_qualified and (why := said.unqualified()) is not None:
            notes.append(why)
            unqualified = why
    kept = tuple(dismissals) if loaded.config.dismissals == "on" else ()
    return Plan(loaded, selection, gate if gate is not None else loaded.config.gate(), llm, tuple(notes), kept,
                unqualified)


class Ending(Enum):
    """What a finished review says as it ends, as a fact; each surface words it (`Result.end`)."""

    FAILED = "failed"  # every analyzer failed: one line per error, and nothing else
    UNMEASURED = "unmeasured"  # the gate names figures this run did not measure
    BUDGET = "budget"  # an LLM budget cut work off
    BLOCKED = "blocked"  # the gate cannot pass over what an analyzer read and did not analyse
    MATCHED = "matched"  # the gate's conditions that hold


@dataclass
class Result:
    """A finished review: its reports, the gate's verdict, and what an LLM budget cut off."""

    reports: list[AnalyzerReport]
    verdict: Verdict
    budget_cut: str | None = None
    notes: tuple[str, ...] = ()
    diff: DiffFilter | None = None  # the lines the change's diff shows: the only ones annotated

    @property
    def all_failed(self) -> bool:
        return bool(self.reports) and all(r.error for r in self.reports)

    def errors(self) -> list[str]:
        """Each analyzer's error, once, when every analyzer failed (else none: a run with a
        result says its errors in that result)."""
        return list(dict.fromkeys(r.error for r in self.reports if r.error)) if self.all_failed else []

    def budget_message(self) -> str | None:
        """In words, what a spent LLM budget left undone (None: it cut nothing off)."""
        if not self.budget_cut:
            return None
        skipped = sum(1 for r in self.reports for s in r.skipped if s.budget and s.item != BUDGET_ITEM)
        stopped = [r.title for r in self.reports if r.stopped_by_budget]
        done = "; ".join([*([f"{skipped} item{'s' if skipped != 1 else ''} skipped"] if skipped else []),
                          *(f"{t} stopped early" for t in stopped)]) or "some work not done"
        return f"the LLM budget ran out ({self.budget_cut}): {done}; the result is partial"

    def gate(self) -> Gate:
        """The gate's state as every output's verdict reads it (reporters/verdict.py): its
        expression, whether it fails, why (what it cannot pass over, the alternatives that hold)."""
        v = self.verdict
        return Gate(v.gate.text, v.fails, (*v.blocked.values(), *(v.explained.get(m, m) for m in v.matched)))

    def endings(self) -> list[tuple[Ending, str]]:
        """What the run's end says, in order: each error when every analyzer failed; else the
        figures the gate could not read, the budget's cut, what the gate cannot pass over, and
        the conditions that hold."""
        if self.all_failed:
            return [(Ending.FAILED, err) for err in self.errors()]
        v = self.verdict
        return [*([(Ending.UNMEASURED, ", ".join(v.missing))] if v.missing else []),
                *([(Ending.BUDGET, cut)] if (cut := self.budget_message()) is not None else []),
                *((Ending.BLOCKED, why) for why in v.blocked.values()),
                *([(Ending.MATCHED, "; ".join(v.matched))] if v.matched else [])]

    def end(self, words: Mapping[Ending, str], say: Callable[[str], object], *,
            partial_is_status: bool = False) -> int:
        """Say the run's end in a surface's `words` (a template per fact, "{}" its text); the
        exit status (`exit_code`)."""
        for ending, text in self.endings():
            say(words[ending].format(text))
        return self.exit_code(partial_is_status=partial_is_status)

    def exit_code(self, *, partial_is_status: bool = False) -> int:
        """1: the gate fails (or cannot pass) or every analyzer failed; 3: a budget cut work off
        and `partial_is_status` (the CLI); else 0."""
        if self.verdict.fails or self.all_failed:
            return EXIT_GATE
        return EXIT_BUDGET if partial_is_status and self.budget_cut else 0


def note_cut(cut: str | None, report: AnalyzerReport) -> None:
    """List in the report the work a budget cut off (before it is published)."""
    if cut and not any(s.budget for s in report.skipped):
        report.skipped.append(Skipped(BUDGET_ITEM, f"the rest of this analysis was not done: {cut}", budget=True))


def run(p: Plan, change: Change, *, tools: Tools, on_done: Callable[[AnalyzerReport], None] | None = None,
        on_context: Callable[[AnalysisContext], object] | None = None) -> Result:
    """Run the plan on the change; the Result for the surface to publish. `on_done`
    is called as each analyzer ends (progress); `on_context` with the analysis context before
    the analyzers start (the App charges and caches its LLM use through it)."""
    # one read per file for every analyzer of the review (EditingRTC's hunk names, CRScore's
    # smells and AutoFix all read the head's files; on the Action each read is a request)
    files = cache(change.files) if change.files is not None else None
    # a fresh process's start-ups, once the first LLM request is out (while the model answers)
    registry.start_ahead(p.names, tools, after=REQUEST_SENT)
    ctx = analysis_context(p.loaded, p.selection, tools=tools, llm_factory=p.llm, comments=change.comments,
                           file_loader=files, repo_path=change.checkout)
    ctx.unqualified = p.unqualified
    if on_context is not None:
        on_context(ctx)
    reports = run_all(p.names, change.changes, ctx, on_done=on_done)
    cut = ctx.llm.budget_cut if ctx.has_llm else None
    for r in reports:
        note_cut(cut, r)
        if change.unlisted is not None:
            r.skipped.append(change.unlisted.item)
    policy = p.loaded.config.gate_inconclusive
    counted = judge(p.gate, reports, policy) if p.loaded.config.gate_dismissed else None
    for r in reports:
        dismiss(r, p.dismissals)
    verdict = counted if counted is not None else judge(p.gate, reports, policy)
    return Result(reports, verdict, cut, (*p.notes, *change.said), DiffFilter.of(change.changes))


class Source(Protocol):
    """What a review reads, where its surface reads it (the CLI's files and git, the Action's
    token, the App's installation)."""

    def config(self) -> LoadedConfig:
        """The repository's config at the commit that decides (never the pull request's copy)."""
        ...

    def dismissals(self, loaded: LoadedConfig) -> LoadedDismissals:
        """The team's dismissals (their error, if any, is a note of the review)."""
        ...

    def standing(self, model: str | None) -> Standing:
        """What the surface's qualification record says of `model` (None: its default)."""
        ...

    def change(self, p: Plan) -> Change:
        """The change, its review comments and its files at the head."""
        ...


@dataclass(frozen=True)
class Read:
    """A Source whose parts are read already: the command line reads its files first, so that
    bad input is said before any work."""

    loaded: LoadedConfig
    read: Change
    dismissed: LoadedDismissals = LoadedDismissals()
    standing_of: Callable[[str | None], Standing] = lambda model: Standing(model or "", "", False)

    def config(self) -> LoadedConfig:
        return self.loaded

    def dismissals(self, loaded: LoadedConfig) -> LoadedDismissals:
        return self.dismissed

    def standing(self, model: str | None) -> Standing:
        return self.standing_of(model)

    def change(self, p: Plan) -> Change:
        return self.read


@dataclass(frozen=True)
class Settings:
    """What a surface's operator and arguments decide of a review: its tools, its choice over
    the config (bot/core/context.py `select`, with its arguments), the LLM factory of the
    chosen model (None: the surface's default), and a gate that replaces the file's."""

    tools: Tools
    choose: Callable[[LoadedConfig], Selection]
    llm: Callable[[str | None], LLMFactory | None]
    gate: FailOn | None = None


def prepare(source: Source, settings: Settings) -> Plan:
    """The plan of a review from what its source reads and its settings."""
    loaded = source.config()
    sel = settings.choose(loaded)
    dismissed = source.dismissals(loaded)
    if dismissed.error:
        sel = replace(sel, notes=[*sel.notes, dismissed.error])
    return plan(loaded, sel, llm=settings.llm(sel.model), gate=loaded.config.gate(settings.gate),
                standing=lambda: source.standing(sel.model), dismissals=dismissed.dismissals)


class Output:
    """One output of a review in the one lifecycle `execute` drives (check runs, further
    reporters, a printed format); what an output does not need is a no-op here."""

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        """Before the change is read (check runs open in progress): `titles` by analyzer name."""

    def publish(self, result: Result, target: Target) -> None:
        """The judged review; `target` now with the lines its diff shows (`Result.diff`)."""

    def finish(self) -> None:
        """After every output published: write what was held back."""

    def abandon(self, why: str) -> None:
        """The review stopped before it was published: close what `start` opened."""


def execute(source: Source, outputs: Sequence[Output], settings: Settings, *, planned: Plan | None = None,
            target: Target | None = None, on_done: Callable[[AnalyzerReport], None] | None = None,
            on_context: Callable[[AnalysisContext], object] | None = None) -> Result:
    """The whole review: planned (`planned`: a plan made already), the outputs started, the
    change read, the plan run, the Result published to each output and each finished; every
    output started is abandoned, saying why, when anything on the way raises (but `Withdrawn`:
    the review is no longer this run's to publish)."""
    p = planned or prepare(source, settings)
    titles = {n: registry.get(n).title for n in p.names}
    target = target or Target()
    started: list[Output] = []
    try:
        for out in outputs:
            out.start(target, titles)
            started.append(out)
        result = run(p, source.change(p), tools=settings.tools, on_done=on_done, on_context=on_context)
        target = replace(target, diff=result.diff)
        for out in outputs:
            out.publish(result, target)
        for out in outputs:
            out.finish()
    except Withdrawn:
        raise
    except BaseException as e:
        for out in started:
            out.abandon(f"The run stopped: {type(e).__name__}: {e}")
        raise
    return result


class Withdrawn(Exception):  # noqa: N818 (a fact, not a failure)
    """The review is no longer this run's to publish (superseded, or taken over by a later
    attempt): its outputs are left as they are, for the run that has it now."""
