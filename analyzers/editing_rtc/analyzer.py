"""EditingRTC (RTC paper §3.2): can a model describe an edit and re-create it from its description?

Forward: (old code, new code) → N_f edit descriptions at T = 1.0.
Backward: (old code, description) → new code at T = 0, one sample per description, and once
more from the uninformative description "Edit." for the baseline.
Sim: exact match after stripping (the paper's); also whitespace-normalised match and chrF.
Regenerated code is taken from a fenced block or up to an explicit end marker — never cut at
a blank line — and small models that ignore the format are tolerated.
Integrity: a description that carries the new code (analyzers/rtc/leak.py) is an invalid sample and
counts as a failed round trip; the finding says why, and reports how many leaked. The code and
the descriptions go into the prompts as data: fenced (a fence longer than any backtick run
inside), with the instruction that nothing inside is addressed to the model. The prompts
(prompts.py) are laid out for prefix caches: every request of a hunk is the same chat up to
the hunk's old code.
"""

from __future__ import annotations

import logging
import re
import textwrap
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum

from pydantic import Field

from analyzers.code.diff import CODE_LANGUAGES, ChangeSet, FileChange, Hunk
from analyzers.code.enclosing import hunk_labels
from analyzers.code.kinds import not_code
from analyzers.context import AnalysisContext, Tools
from analyzers.editing_rtc import evidence
from analyzers.editing_rtc import view as editing_rtc_view
from analyzers.editing_rtc.prompts import END, backward_messages, forward_messages
from analyzers.info import AnalyzerInfo
from analyzers.llm.answer import cut_note
from analyzers.llm.client import BudgetExceeded, Halted, LLMClient
from analyzers.llm.format_watch import FormatWatch, counting
from analyzers.llm.local import ALIAS as EMBEDDED_ALIAS
from analyzers.options import AnalyzerOptions
from analyzers.pipeline import files_at_head
from analyzers.report import AnalyzerReport, Finding, SkipKind, Skipped
from analyzers.rtc import similarity
from analyzers.rtc.leak import leak_note, leak_rate, leak_reason
from analyzers.rtc.round_trip import RoundTrip, aggregate, round_trip
from analyzers.rtc.round_trip import regenerations as trip_regenerations

log = logging.getLogger(__name__)
BASELINE = "Edit."
REMOVED_ONLY = "lines removed only: nothing to re-create"  # a hunk EditingRTC does not score


class EditingRTCConfig(AnalyzerOptions):
    """`options: {editing_rtc: ...}`; the bounds cap a pull request's cost (per hunk at most
    2·n_forward + 1 requests, each within its token maximum)."""

    n_forward: int = Field(default=3, ge=1, le=5)
    forward_temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    forward_max_tokens: int = Field(default=256, ge=1, le=1024)
    backward_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    backward_max_tokens: int = Field(default=1024, ge=1, le=2048)
    seed: int = Field(default=1234, ge=0, le=2**31 - 1)
    max_hunks: int = Field(default=100, ge=1, le=100)
    max_hunk_chars: int = Field(default=6000, ge=1, le=12000)



_MARKERS = re.compile(r"^\s*\[(old|new|edit description|end)\]", re.M | re.I)
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*\n", re.M)


def _before_markers(text: str) -> str:
    m = _MARKERS.search(text)
    return text[: m.start()] if m else text


def parse_description(text: str, limit: int = 1000) -> str:
    """The description: text before any echoed prompt marker, whitespace-collapsed (one line,
    the last of the backward prompt: it cannot open a section of its own there)."""
    text = _before_markers(text).strip().strip("`").strip()
    return similarity.normalise_ws(text)[:limit]


def forward_well_formed(text: str) -> bool:
    """A description as asked: some text before any echoed prompt marker, with no code block."""
    return bool(parse_description(text)) and not _FENCE_OPEN.search(text)


def backward_well_formed(text: str) -> bool:
    """Code as asked: a fenced block."""
    return _FENCE_OPEN.search(text) is not None


def parse_code(text: str) -> str:
    """Code from a model answer: the first fenced block (to its closing fence, or to the end
    if the answer was cut), else the text before an end or prompt marker. Blank lines inside
    the code are kept."""
    m = _FENCE_OPEN.search(text)
    if m:
        fence = m.group(1)
        body = text[m.end():]
        close = re.search(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", body, re.M)
        code = body[: close.start()] if close else body
        end = code.find(END)
        return code[:end] if end >= 0 else code
    marker = _MARKERS.search(text)
    return text[: marker.start()] if marker else text


@dataclass
class HunkResult:
    hunk: Hunk
    trip: RoundTrip
    scores: dict[str, float]
    cut: int = 0  # the hunk's answers cut at the byte cap (analyzers/llm/answer.py)


class Unscored(Enum):
    """Why a hunk's round trip was not made."""

    BUDGET = "not scored"  # the run's LLM budget was spent
    HALTED = "not asked"  # the format watch had stopped the run before its turn


@dataclass(frozen=True)
class NotScored:
    """A hunk not scored: why, as a fact, and the model client's words."""

    why: Unscored
    words: str

    @property
    def reason(self) -> str:
        """What the report's Skipped item says: "not scored: <the budget's words>"."""
        return f"{self.why.value}: {self.words}"


class EditingRTC(AnalyzerInfo):
    name = "editing_rtc"
    title = "EditingRTC"
    help = ("EditingRTC: can a model describe this edit and re-create it from its own "
            "description? Low round-trip correctness marks edits that are hard to explain.")
    options_type = EditingRTCConfig
    counts = ("hunk", "hunks")
    headline = staticmethod(editing_rtc_view.headline)  # its words and its dashboard (analyzers/presentation.py)
    advice = staticmethod(editing_rtc_view.advice)
    measures = editing_rtc_view.MEASURES  # what its figures measure, and what a good value is
    dashboard = staticmethod(editing_rtc_view.dashboard)
    labels, count_scores = editing_rtc_view.LABELS, editing_rtc_view.COUNTS
    regenerations = staticmethod(trip_regenerations)  # what `explain` diffs

    @staticmethod
    def ahead(tools: Tools, /) -> None:
        similarity.load()  # chrF's import, while the first requests are out rather than after the answers

    def __init__(self, config: EditingRTCConfig | None = None) -> None:
        self.config = config

    # -- one edit ------------------------------------------------------------------------
    def round_trip(self, llm: LLMClient, old: str, new: str, lang: str = "",
                   answered: Callable[[bool], object] | None = None, *,
                   cfg: EditingRTCConfig | None = None) -> RoundTrip:
        """`answered(well_formed)`: called for each of the model's answers (`rtcbot qualify`
        counts the share in the expected format); `cfg`: the run's options (else the
        instance's, else the defaults)."""
        cfg = cfg or self.config or EditingRTCConfig()

        def forward() -> list[str]:
            texts = llm.sample(forward_messages(old, new, lang), n=cfg.n_forward,
                               temperature=cfg.forward_temperature,
                               max_tokens=cfg.forward_max_tokens, seed=cfg.seed,
                               heard=counting(answered, forward_well_formed))
            return [parse_description(t) or BASELINE for t in texts]

        def leak(description: str) -> str | None:  # judged on what the backward step is given
            return leak_reason(description, new, old)

        def backward(description: str) -> list[str]:
            texts = llm.sample(backward_messages(old, description, lang), n=1,
                               temperature=cfg.backward_temperature,
                               max_tokens=cfg.backward_max_tokens, seed=cfg.seed,
                               heard=counting(answered, backward_well_formed))
            return [parse_code(t) for t in texts]

        return round_trip(forward, backward, new, similarity.SIMS, BASELINE, mapper=llm.map, leak=leak)

    def score(self, llm: LLMClient, old: str, new: str, lang: str = "",
              answered: Callable[[bool], object] | None = None, *,
              cfg: EditingRTCConfig | None = None) -> tuple[RoundTrip, dict[str, float]]:
        trip = self.round_trip(llm, old, new, lang, answered, cfg=cfg)
        return trip, trip.scores("exact")

    # -- a change set --------------------------------------------------------------------
    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        cfg = self.config or ctx.config(self.name, EditingRTCConfig)  # this run's: the instance stays as made
        report = AnalyzerReport(self.name, self.title)
        todo = _hunks_to_score(changes, cfg, report)
        if not todo:
            removed = any(s.reason == REMOVED_ONLY for s in report.skipped)
            report.not_run = "the code changes only remove lines" if removed else _nothing_to_score(changes)
            return report
        llm = ctx.llm
        # a model that keeps missing the formats asked (a description without code; code in a
        # fence) is stopped after a handful of answers (analyzers/llm/format_watch.py)
        watch = FormatWatch("(a description without code; the code in a fence)")
        watched = llm.halting(watch.why)

        def one(item: tuple[FileChange, Hunk]) -> HunkResult | NotScored:
            fc, hunk = item
            view = watched.scoped()  # this hunk's usage: its answers cut, if any
            try:
                trip, scores = self.score(view, hunk.old_code, hunk.new_code, fc.language or "", watch.saw, cfg=cfg)
            except BudgetExceeded as e:
                return NotScored(Unscored.BUDGET, str(e))
            except Halted as e:
                return NotScored(Unscored.HALTED, str(e))
            return HunkResult(hunk, trip, scores, view.usage.cut)

        # the files at the head name each hunk's definition: read and named beside the round trips
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hunk-labels") as io:
            loading = io.submit(labels_at_head, ctx, todo)
            results = llm.map(one, todo)
            texts, labels = loading.result()
        report.notes += [f"{p}: {w}; its hunks are named by git's header" for p in texts if (w := ctx.unread.get(p))]
        _findings(report, todo, results, labels, embedded=llm.settings.model == EMBEDDED_ALIAS,
                  unqualified=bool(ctx.unqualified))
        stopped = sum(isinstance(r, NotScored) and r.why is Unscored.HALTED for r in results)
        format_note = watch.note(stopped)
        if format_note and watch.bad:
            report.notes.append(format_note)
        if watch.bad and not watch.good:  # the operator's problem, not a finding
            _unusable(report, watch.seen)
        report.planned = len(todo)
        if len(report.findings) < len(todo):
            report.cut_by = "the model's answers out of format" if stopped else "LLM budget"
        _aggregate(report)
        return report


def _findings(report: AnalyzerReport, todo: Sequence[tuple[FileChange, Hunk]],
              results: Sequence[HunkResult | NotScored], labels: Sequence[str], *, embedded: bool,
              unqualified: bool = False) -> None:
    """Each scored hunk's finding, judged conclusive or not (analyzers/editing_rtc/evidence.py);
    each hunk not scored listed as skipped, with why."""
    failed: list[bool] = []
    done: list[HunkResult] = []
    for (fc, hunk), res, label in zip(todo, results, labels, strict=True):
        if isinstance(res, NotScored):
            report.skipped.append(Skipped(f"{fc.path} {hunk.header}", res.reason, path=fc.path,
                                          budget=res.why is Unscored.BUDGET))
            continue
        report.findings.append(to_finding(fc, res, label))
        failed.append(evidence.failed_baseline(hunk, res.trip))
        done.append(res)
    evidence.judge(report.findings, failed, embedded=embedded, unqualified=unqualified)
    for f, res in zip(report.findings, done, strict=True):
        if f.inconclusive is not None:  # what the model understood; nothing said of the change
            f.message = message(res, conclusive=False)


def _unusable(report: AnalyzerReport, seen: int) -> None:
    """No answer of the model was in the format asked: the run says so ("not run", and a
    warning in the operator's log), and the hunks it finished are listed as not scored, never
    as findings built from answers it could not read."""
    report.not_run = f"the model's answers were not usable: 0 of {seen} in format"
    report.skipped += [Skipped(f"{f.path} {f.title}", "not scored: none of the model's answers was usable",
                               path=f.path or "") for f in report.findings]
    report.findings = []
    log.warning("EditingRTC did not run: %s (the model's, not the change's)", report.not_run)


def _aggregate(report: AnalyzerReport) -> None:
    """The report's figures over its conclusive hunks (the inconclusive ones counted apart)."""
    scored = report.conclusive
    if report.inconclusive:
        report.scores["inconclusive"] = float(len(report.inconclusive))
    if not scored:
        return
    report.scores = {**aggregate([f.scores for f in scored]), "hunks": float(len(scored)), **report.scores}
    leaks = [f.scores.get("leaks", 0.0) for f in scored]
    report.scores["leaks"] = sum(leaks)
    report.scores["leak_rate"] = leak_rate(leaks, [float(len(f.evidence["descriptions"])) for f in scored])


def labels_at_head(ctx: AnalysisContext,
                   todo: Sequence[tuple[FileChange, Hunk]]) -> tuple[dict[str, str | None], list[str]]:
    """The files at the head, and each hunk's label (analyzers/code/enclosing.py), each file read once."""
    texts = files_at_head(ctx, [fc.path for fc, _ in todo])
    by_file: dict[str, list[int]] = {}
    for i, (fc, _) in enumerate(todo):
        by_file.setdefault(fc.path, []).append(i)
    labels = [""] * len(todo)
    for path, at in by_file.items():
        names = hunk_labels([todo[i][1] for i in at], texts[path], todo[at[0]][0].language)
        for i, name in zip(at, names, strict=True):
            labels[i] = name
    return texts, labels


def _hunks_to_score(changes: ChangeSet, cfg: EditingRTCConfig, report: AnalyzerReport) -> list[tuple[FileChange, Hunk]]:
    """The code hunks to round-trip; the others skipped in `report`, each with why."""
    todo: list[tuple[FileChange, Hunk]] = []
    kind: SkipKind
    for fc, hunk in changes.hunks():
        if fc.language not in CODE_LANGUAGES:
            why, kind = not_code(fc.path, fc.language), "policy"
        elif not hunk.added_lines and not hunk.removed_lines:
            continue
        elif not hunk.added_lines:  # nothing to re-create: a deletion is described by what it removes
            why, kind = REMOVED_ONLY, "policy"
        elif len(hunk.old_code) + len(hunk.new_code) > cfg.max_hunk_chars:
            why, kind = f"hunk over {cfg.max_hunk_chars} characters", "failed"
        elif len(todo) >= cfg.max_hunks:
            why, kind = f"over the limit of {cfg.max_hunks} hunks per run", "failed"
        else:
            todo.append((fc, hunk))
            continue
        report.skipped.append(Skipped(f"{fc.path} {hunk.header}", why, kind, fc.path))
    return todo


def _short(text: str, limit: int = 160) -> str:
    """`text` on one line in at most `limit` characters, cut at a word with " …"."""
    return textwrap.shorten(text, limit, placeholder=" …")


def _nothing_to_score(changes: ChangeSet) -> str:
    """Why no hunk was scored: no changed code, or code that could not be read (a hunk past the
    line limit, a malformed section: "not analysed", never "no changed code")."""
    unread = sum(1 for f in changes.files if f.skip_kind == "failed")
    if unread:
        return f"no changed code it could read ({unread} changed file{'s' if unread != 1 else ''} not analysed)"
    return "no changed code to re-create"


def message(res: HunkResult, conclusive: bool = True) -> str:
    """The finding's words: whether a description re-created the edit (only where the evidence
    says something about the change), leaks and cut answers, and what the model understood."""
    trip = res.trip
    said = ("The model re-created this edit from its own description." if res.scores["rtc"] > 0
            else "No description let the model re-create this edit.") if conclusive else ""
    return (f"{said}{leak_note(trip.leaks or [])} {cut_note(res.cut) + ' ' if res.cut else ''}"
            f"What the model understood: \"{_short(trip.forward[0] if trip.forward else '')}\"").strip()


def to_finding(fc: FileChange, res: HunkResult, label: str = "") -> Finding:
    """The hunk's finding; `label`: the definition it changes (analyzers/code/enclosing.py), else
    git's header context."""
    h, s, trip = res.hunk, res.scores, res.trip
    start, end = h.span
    leaks = trip.leaks or []
    return Finding(
        analyzer=EditingRTC.name,
        title=label or h.section or f"hunk at line {start}",
        message=message(res),
        path=fc.path,
        start_line=start,
        end_line=end,
        level="warning" if any(leaks) else "notice",
        scores=s,
        evidence={
            "descriptions": trip.forward,
            **({"leaks": leaks} if any(leaks) else {}),
            **({"answers_cut": res.cut} if res.cut else {}),
            "regenerated": [row[0] if row else "" for row in trip.backward],
            "baseline_regenerated": trip.baseline[0] if trip.baseline else "",
            "sims": trip.sims,
            "baseline_sims": trip.baseline_sims,
        },
        key=h.key,
        missed=evidence.missed(h, trip),
    )
