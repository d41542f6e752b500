"""The CRScore check: Con / Comp / Rel for every review comment on a pull request.

For each comment (`ctx.comments`): find the hunk it sits on (its path and its line on its side:
a base-file line for GitHub's `side: LEFT`, a head-file line otherwise; a comment with no line —
line ≤ 0 — is about the whole file; an outdated one is skipped, with the reason), build that
unit's pseudo-references once (LLM claims, cached by the LLM client, plus code smells on the
changed lines, detected on the post-change file when `ctx.file_at_head` has it, on the hunk's
new code otherwise), then score every comment in one embedding pass. Each finding carries
the matched and the missed pseudo-references, so a reviewer sees what the comment left out.
The report's notes list what nobody reviewed (`unreviewed`): the claims and smells of the
commented hunks that no comment matched, smells first, with their lines, and the changed
hunks that have no comment at all.

The work that needs no LLM runs while the claims requests are out: the embedding model's load
(in a fresh process: beside the smells, not after them), the smell detectors (one run per
language for all the files and hunks), then the embeddings of the comments and the smells, so
that only the claims are left to embed when they come.

Options (`CRScoreOptions`, `options: {crscore: ...}`): `model` (embedding model: the default
or one in the operator's allow-list, RTCBOT_EMBEDDING_MODELS), `pooling` ("tokens" | "model"),
`soft` (default True: threshold-free scores, the rtcbot recipe of recipe.py: a floor of 0.2,
Rel the F-2 of Con and Comp), `tau` (0–1; implies the thresholded scores;
default: the model's calibrated τ from tau.json), `claims` (default True).
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from analyzers.code import suppressions
from analyzers.code.diff import CODE_LANGUAGES, ChangeSet, FileChange, Hunk
from analyzers.code.kinds import not_code
from analyzers.context import AnalysisContext, ReviewComment, Tools
from analyzers.crscore import score as crs
from analyzers.crscore import view
from analyzers.crscore.ahead import load_model, pre_embed
from analyzers.crscore.claims import Claims, generate_claims
from analyzers.crscore.recipe import RECIPES
from analyzers.crscore.smells import (
    SmellReport,
    Source,
    detect_many,
    file_source,
    hunk_source,
    normalise_language,
    on_hunk,
)
from analyzers.crscore.sts import (
    DEFAULT_MODEL,
    EmbeddingError,
    Pooling,
    canonical_name,
    shared_embedder,
)
from analyzers.info import AnalyzerInfo
from analyzers.llm.client import BudgetExceeded, LLMError
from analyzers.options import AnalyzerOptions, allowed
from analyzers.pipeline import files_at_head
from analyzers.report import AnalyzerReport, Finding, Skipped


@dataclass
class Unit:
    """What a comment is about: one hunk, or a whole file's hunks."""

    file: FileChange
    hunks: list[Hunk]
    key: str
    claims: list[str] = field(default_factory=list)
    smells: list[str] = field(default_factory=list)
    implications: list[str] = field(default_factory=list)  # the claims about consequences

    @property
    def pseudo_refs(self) -> list[str]:
        return [*self.claims, *self.smells]

    @property
    def added_lines(self) -> list[int]:
        return [n for h in self.hunks for n in h.added_lines]


def locate(changes: ChangeSet, comment: ReviewComment) -> tuple[FileChange, list[Hunk]] | str:
    """The file and hunk(s) a comment is about, or why it cannot be scored."""
    fc = changes.file(comment.path)
    if fc is None:
        return "file not in the diff"
    if fc.skipped:
        return f"file not analysed ({fc.skipped})"
    if fc.language not in CODE_LANGUAGES:  # claims and smells are about code, as EditingRTC's round trip
        return not_code(fc.path, fc.language)
    if comment.outdated:
        return "outdated: GitHub no longer shows it on the diff"
    if not comment.line or comment.line <= 0:
        return (fc, list(fc.hunks)) if fc.hunks else "file has no hunks"
    for h in fc.hunks:
        if comment.lines_in(h):  # its line on its side: LEFT the base file's, RIGHT the head's
            return fc, [h]
    return "line outside the diff"


@dataclass
class SmellPlan:
    """What the detectors look at for a set of units (pure): each file's post-change text
    when it is available, else the new code of each of its hunks; each piece once."""

    sources: list[Source] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)  # path → index in sources
    hunks: dict[int, int] = field(default_factory=dict)  # id(hunk) → index in sources
    # the detectors' suppressions on added lines, made inert: they count from the base branch
    suppressed: list[suppressions.AddedSuppression] = field(default_factory=list)

    @classmethod
    def of(cls, units: list[Unit], texts: dict[str, str | None]) -> SmellPlan:
        plan = cls()
        for unit in units:
            fc = unit.file
            text = texts.get(fc.path)
            if text is not None:
                if fc.path not in plan.files:
                    text = plan.inert(fc, text, fc.changed_lines)
                    plan.files[fc.path] = plan.add(file_source(fc.language, fc.path, text))
                continue
            for h in unit.hunks:
                if id(h) not in plan.hunks:
                    src = hunk_source(fc.language, h)
                    code = plan.inert(fc, src.code, [n - h.new_start + 1 for n in h.added_lines], h.new_start - 1)
                    plan.hunks[id(h)] = plan.add(replace(src, code=code))
        return plan

    def inert(self, fc: FileChange, code: str, added: list[int], offset: int = 0) -> str:
        """`code` with PMD's and JSHint's suppressions on its `added` lines made inert (noted)."""
        code, found = suppressions.neutralise(normalise_language(fc.language), code, added, fc.path)
        self.suppressed += [replace(a, line=a.line + offset) for a in found]
        return code

    def add(self, source: Source) -> int:
        self.sources.append(source)
        return len(self.sources) - 1

    def on_unit(self, unit: Unit, reports: list[SmellReport]) -> list[SmellReport]:
        """The unit's smells, on its added lines, numbered as in the file."""
        fc = unit.file
        if fc.path in self.files:
            whole = reports[self.files[fc.path]].on_lines(fc.changed_lines)
            return [whole.on_lines(unit.added_lines)]
        return [on_hunk(reports[self.hunks[id(h)]], h) for h in unit.hunks]


def place(changes: ChangeSet, comments: list[ReviewComment], report: AnalyzerReport
          ) -> tuple[list[Unit], list[tuple[ReviewComment, Unit]]]:
    """Each comment's unit (its hunk, or the hunks of its file it spans), one unit per key; a
    comment that sits on no changed code is skipped in the report, saying why."""
    units: dict[str, Unit] = {}
    placed: list[tuple[ReviewComment, Unit]] = []
    for c in comments:
        where = locate(changes, c)
        if isinstance(where, str):
            report.skipped.append(Skipped(f"comment at {c.path}:{c.line}", where, "policy"))
            continue
        fc, hunks = where
        key = hunks[0].key if len(hunks) == 1 else "file:" + fc.path + ":" + "".join(h.key for h in hunks)
        placed.append((c, units.setdefault(key, Unit(fc, hunks, key))))
    return list(units.values()), placed


def warm_up(pmd_server: str = "auto") -> None:
    """Load the default embedding model and start the PMD and JSHint servers: a long-lived
    process (a worker) pays each once at start, not in its first pull request."""
    from analyzers.crscore.smells import jshint, pmd

    shared_embedder().embed(["warm up"])
    pmd.warm_up(pmd_server)
    jshint.warm_up()


OWN_COMMENT = view.OWN_COMMENT
TITLE_CHARS = 120  # a finding's title: "comment by <login>: <its first line>", cut at a word
MAX_UNREVIEWED = 10  # pseudo-references listed as unreviewed per report; more are counted
_SMELL_LINE = re.compile(r"\bline (\d+)\b")
RECIPE = RECIPES["rtcbot"]  # the soft scores; with a τ (`tau`, `soft: false`) the paper's thresholds apply


def unreviewed(changes: ChangeSet, placed: list[tuple[ReviewComment, Unit]], results: list[crs.Scores]
               ) -> list[str]:
    """What no review comment covered: the pseudo-references of the commented hunks that no
    comment on them matched (above τ; soft scores: above 0.5) — smells first (a tool's finding
    on a line), then implications, then the summary claims — with their lines; and the changed
    hunks nobody commented on."""
    covered: dict[str, set[str]] = {}
    units: dict[str, Unit] = {}
    for (_, unit), s in zip(placed, results, strict=True):
        units[unit.key] = unit
        covered.setdefault(unit.key, set()).update(m.pseudo_ref for m in s.matched)
    ranked: list[tuple[int, int, str]] = []
    for unit in units.values():
        lo, hi = unit.hunks[0].span[0], unit.hunks[-1].span[1]
        refs = [(0, r) for r in unit.smells] + [(1, r) for r in unit.implications] + \
               [(2, r) for r in unit.claims if r not in unit.implications]
        for rank, ref in refs:
            if ref.strip() and ref.strip() not in covered[unit.key]:
                m = _SMELL_LINE.search(ref) if rank == 0 else None
                where = f"{unit.file.path}:{m.group(1)}" if m else f"{unit.file.path}:{lo}-{hi}"
                ranked.append((rank, len(ranked), f"{where} — {ref.strip()}"))
    ranked.sort()
    notes = [f"not covered by any review comment: {text}" for _, _, text in ranked[:MAX_UNREVIEWED]]
    if len(ranked) > MAX_UNREVIEWED:
        notes.append(f"{len(ranked) - MAX_UNREVIEWED} more claims or smells not covered by any review comment")
    seen = {id(h) for u in units.values() for h in u.hunks}
    silent = [f"{fc.path}:{h.span[0]}-{h.span[1]}" for fc, h in changes.hunks() if id(h) not in seen]
    if silent:
        shown = ", ".join(silent[:MAX_UNREVIEWED]) + (f" and {len(silent) - MAX_UNREVIEWED} more"
                                                     if len(silent) > MAX_UNREVIEWED else "")
        notes.append(f"{len(silent)} changed hunk(s) have no review comment: {shown}")
    return notes


def comment_key(unit_key: str, body: str) -> str:
    return hashlib.sha256(f"{unit_key}\0{body}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


class CRScoreOptions(AnalyzerOptions):
    """`options: {crscore: ...}`. An embedding model is loaded by name (a local path would be
    one too), so a repository may pick only the default or a model the operator allows."""

    model: str = DEFAULT_MODEL
    pooling: Pooling = "tokens"
    soft: bool | None = None  # None: soft unless tau is given
    tau: float | None = Field(default=None, ge=0.0, le=1.0)
    claims: bool = True

    @field_validator("model")
    @classmethod
    def _allowed_model(cls, v: str, info: ValidationInfo) -> str:
        tools: Any = (info.context or {}).get("tools")
        ok = {canonical_name(m) for m in (DEFAULT_MODEL, *allowed(tools, "embedding_models"))}
        if canonical_name(v) not in ok:
            raise ValueError("not an embedding model this installation allows (the operator's "
                             f"RTCBOT_EMBEDDING_MODELS; allowed: {', '.join(sorted(ok))})")
        return v

    @property
    def thresholded(self) -> bool:
        return not self.soft if self.soft is not None else self.tau is not None


class CRScoreAnalyzer(AnalyzerInfo):
    name = "crscore"
    title = "CRScore"
    help = ("CRScore: conciseness, comprehensiveness and relevance of a review comment "
            "against pseudo-references derived from the change.")
    options_type = CRScoreOptions
    reads_comments = True  # the context builders fetch the pull request's review comments
    counts = ("review comment", "review comments")
    headline = staticmethod(view.headline)  # its words and its dashboard (analyzers/presentation.py)
    advice = staticmethod(view.advice)
    dashboard = staticmethod(view.dashboard)
    labels = view.LABELS
    needs = ("embeddings", "smells")  # the sentence-embedding model; PMD, JSHint, Python's smells

    @staticmethod
    def warm_up(tools: Tools) -> None:
        warm_up(tools.pmd_server)

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        report = AnalyzerReport(self.name, self.title)
        report.skipped += [Skipped(f"comment at {c.path}:{c.line}", OWN_COMMENT, "policy")
                           for c in ctx.comments if c.ours]
        comments = [c for c in ctx.comments if not c.ours]
        if not comments:
            report.notes.append("there were no review comments to score" + (
                " but rtcbot's own" if report.skipped else ""))
            report.not_run = "no review comments" + (" but rtcbot's own" if report.skipped else "")
            return report
        opts = ctx.config(self.name, CRScoreOptions)
        tau_opt, soft, pooling = opts.tau, not opts.thresholded, opts.pooling
        todo, placed = place(changes, comments, report)
        if not placed:
            return report
        model = opts.model
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="crscore-local") as ex:
            ex.submit(load_model, model, pooling)  # beside the smells and the claims: a fresh process's start
            local = ex.submit(self._local, todo, [c.body for c, _ in placed], ctx, model, pooling)
            self._claims(todo, ctx, report, opts.claims)
            report.notes += local.result()
        try:
            embedder = shared_embedder(model, pooling)
            tau = None if soft else (float(tau_opt) if tau_opt is not None
                                     else crs.tau_for(embedder.model_name, pooling))
            if not soft and tau is None:
                report.error = f"no calibrated τ for {embedder.model_name} ({pooling}); give one or use soft scores"
                return report
            results = crs.score_reviews(embedder, [(c.body, u.pseudo_refs) for c, u in placed], tau, recipe=RECIPE)
        except EmbeddingError as e:
            report.error = str(e)
            return report
        for (c, unit), s in zip(placed, results, strict=True):
            report.findings.append(self._finding(c, unit, s))
        if results:
            report.scores = {k: round(sum(getattr(s, k) for s in results) / len(results), 4)
                             for k in ("con", "comp", "rel")}
        variant = f"threshold-free, recipe {RECIPE.describe()}" if soft else f"thresholded at τ = {tau}"
        report.notes.append(f"scores {variant}, with {embedder.model_name} ({pooling} pooling)")
        report.notes += unreviewed(changes, placed, results)
        return report

    # -- pseudo-references ----------------------------------------------------------------
    def pseudo_references(self, units: list[Unit], ctx: AnalysisContext, report: AnalyzerReport,
                          claims: bool = True) -> None:
        """Set each unit's claims and smells (the smells are detected while the claims
        requests are out); what could not be looked at goes to `report.notes`. For other
        analyzers that score text against a change (analyzers/review/analyzer.py)."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="crscore-local") as ex:
            local = ex.submit(self._smells, units, ctx)
            self._claims(units, ctx, report, claims)
            report.notes += local.result()

    def _claims(self, units: list[Unit], ctx: AnalysisContext, report: AnalyzerReport, enabled: bool) -> None:
        if not enabled:
            return
        try:
            llm = ctx.llm
        except (RuntimeError, LLMError) as e:
            report.notes.append(f"no LLM claims ({e}); pseudo-references are code smells only")
            return
        before = llm.usage.copy()

        def one(unit: Unit) -> Claims:
            diff = "".join(h.body for h in unit.hunks)  # no @@ line numbers: a shifted hunk reuses its claims
            removed = "".join(h.removed_code for h in unit.hunks)
            added = "".join(h.added_code for h in unit.hunks)
            return generate_claims(llm, diff, removed, added)

        try:
            for unit, claims in zip(units, llm.map(one, units), strict=True):
                unit.claims, unit.implications = claims.all, claims.implications
        except LLMError as e:
            report.notes.append(f"LLM claims stopped: {e}")
            report.stopped_by_budget = cut = isinstance(e, BudgetExceeded)
            # pseudo-references without some claims: scores a gate must not pass on
            report.skipped.append(Skipped("LLM claims", f"not made for every change: {e}", budget=cut))
        report.usage = llm.usage.minus(before).as_dict()

    def _local(self, units: list[Unit], reviews: list[str], ctx: AnalysisContext, model: str,
               pooling: str) -> list[str]:
        """The work that needs no LLM (smells, then the embeddings known before the claims);
        the notes on the smells."""
        notes = self._smells(units, ctx)
        pre_embed(model, pooling, reviews, [s for u in units for s in u.smells])
        return notes

    def _smells(self, units: list[Unit], ctx: AnalysisContext) -> list[str]:
        """Set each unit's smell sentences; the notes on what could not be looked at."""
        texts = files_at_head(ctx, [u.file.path for u in units])
        plan = SmellPlan.of(units, texts)
        reports = detect_many(plan.sources, ctx.tools.pmd_server)
        reasons: set[str] = set()
        for unit in units:
            found = plan.on_unit(unit, reports)
            unit.smells = [s.sentence() for rep in found for s in rep.smells]
            reasons |= {f"{unit.file.path}: {rep.skipped}" for rep in found if rep.skipped}
        unread = [f"{p}: {why}; its smells were looked for in its hunks alone"
                  for p in texts if (why := ctx.unread.get(p))]
        return ([f"smells not detected for {r}" for r in sorted(reasons)] + unread
                + suppressions.summary(plan.suppressed))

    # -- output ---------------------------------------------------------------------------
    def _finding(self, c: ReviewComment, unit: Unit, s: crs.Scores) -> Finding:
        who = f" by {c.author}" if c.author else ""
        missed = "; ".join(m.pseudo_ref for m in s.missed[:3])
        message = (f"Con {s.con:.2f}, Comp {s.comp:.2f}, Rel {s.rel:.2f}"
                   f" ({len(s.matched)}/{len(s.matched) + len(s.missed)} pseudo-references covered)")
        if s.note:
            message += f"; {s.note}"
        elif missed:
            message += f"; missed: {missed}"
        first_line = next((ln.strip() for ln in c.body.splitlines()
                           if ln.strip() and not ln.lstrip().startswith(("```", "~~~", "<!--"))), "(empty comment)")
        # on the head file: a comment on the base side (LEFT) sits where its lines were removed
        span = c.head_span(unit.hunks[0]) or (unit.hunks[0].span[0], unit.hunks[-1].span[1])
        return Finding(
            analyzer=self.name,
            title=textwrap.shorten(f"comment{who}: {first_line}", TITLE_CHARS, placeholder=" …"),
            message=message,
            path=c.path,
            start_line=span[0],
            end_line=span[1],
            level="notice",
            scores=s.as_dict(),
            evidence={"comment": c.body, "pseudo_references": unit.pseudo_refs, **s.evidence()},
            key=comment_key(unit.key, c.body),
            comment_id=c.id,
            on_removed=c.removed_only(unit.hunks[0]),
        )
