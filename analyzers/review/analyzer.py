"""The `review` analyzer: rtcbot as a reviewer whose comments are filtered by CRScore.

Per changed hunk (one with added lines, at most `max_hunks`): the configured LLM is asked for
`candidates` review comments (K samples of one chat at temperature `temperature`, cached like
every LLM answer; each answer is "Line <n>: <comment>", one specific issue, on a line the hunk
shows). The parser keeps every entry that parses and counts the answers that had none, and
the entries on a line the hunk does not show.

Every candidate is scored by CRScore (analyzers/crscore/: the rtcbot recipe's Con / Comp / Rel
with the default embedding model) against that hunk's pseudo-references — LLM claims and code
smells, built once per hunk by the CRScore analyzer's own code, so they are cached as its are.
A candidate is kept when Rel ≥ `min_rel` and Con ≥ `min_con`; each hunk's candidates go in the
recipe's pick order (its own floor and β, then the longest within its margin of the best:
analyzers/crscore/recipe.py), at most `max_per_hunk` per hunk, and one whose embedding is within
`duplicate` cosine similarity of a comment already kept (on any hunk) is dropped as a
near-duplicate. The defaults of `min_rel` / `min_con` (0.13 / 0.14) keep the share of the
crscore-dev reviews that soft scores kept at 0.3 / 0.3 (53.0 % against 53.4 %; docs/crscore.md).

Each kept comment is a Finding: path, line, message = the comment, scores = its CRScore,
evidence = the claims and smells it matched. reporters/pr_review.py posts them as one review.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from analyzers.code.diff import CODE_LANGUAGES, ChangeSet, FileChange, Hunk
from analyzers.code.kinds import not_code
from analyzers.context import AnalysisContext
from analyzers.crscore import recipe
from analyzers.crscore import score as crs
from analyzers.crscore.analyzer import CRScoreAnalyzer, Unit
from analyzers.crscore.sts import EmbeddingError, shared_embedder
from analyzers.info import AnalyzerInfo
from analyzers.llm.client import BudgetExceeded, Halted, LLMClient, LLMError, Message
from analyzers.llm.format_watch import FormatWatch, counting
from analyzers.options import AnalyzerOptions
from analyzers.report import AnalyzerReport, Finding, Skipped
from analyzers.review import view as review_view

MAX_HUNK_CHARS = 6000
RECIPE = recipe.RECIPES["rtcbot"]  # how candidates are scored and picked

SYSTEM = ("You are a meticulous senior software engineer reviewing a pull request. You point out "
          "concrete problems in the changed code, never praise, never a summary.")
INSTRUCTIONS = (
    "Write ONE review comment about ONE specific issue in the added lines (marked +): a bug, "
    "a missed case, a risk, misleading naming, a missing test. Be specific: name the variable, "
    "call or condition. One or two sentences, no code block.\n"
    "Answer in exactly this format, where <number> is the line number shown before an added line:\n"
    "Line <number>: <comment>"
)


class ReviewOptions(AnalyzerOptions):
    """`options: {review: ...}` — how many candidates, how many kept, how good they must be."""

    candidates: int = Field(default=4, ge=1, le=8)  # K comments asked per hunk
    max_per_hunk: int = Field(default=1, ge=1, le=5)  # comments kept per hunk
    min_rel: float = Field(default=0.13, ge=0.0, le=1.0)  # CRScore Rel (rtcbot recipe) a kept comment reaches
    min_con: float = Field(default=0.14, ge=0.0, le=1.0)  # CRScore Con (rtcbot recipe) a kept comment reaches
    duplicate: float = Field(default=0.85, ge=0.5, le=1.0)  # cosine at which two comments are one
    temperature: float = Field(default=0.8, gt=0.0, le=1.5)
    comment_tokens: int = Field(default=160, ge=16, le=512)
    max_hunks: int = Field(default=20, ge=1, le=100)


# ------------------------------------------------------------------------------ prompt
def numbered(hunk: Hunk) -> str:
    """The hunk with each head-side line's number; removed lines have none."""
    rows = []
    for ln in hunk.lines:
        no = "" if ln.new_no is None else str(ln.new_no)
        rows.append(f"{no:>5} {ln.kind if ln.kind in '+-' else ' '} {ln.text}")
    text = "\n".join(rows)
    return text if len(text) <= MAX_HUNK_CHARS else text[:MAX_HUNK_CHARS] + "\n…"


def messages(path: str, hunk: Hunk) -> list[Message]:
    user = f"{INSTRUCTIONS}\n\nChange to `{path}`:\n{numbered(hunk)}\n"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


# ------------------------------------------------------------------------------ parsing
_ENTRY = re.compile(
    r"^\s*(?:[-*•>]\s*|\d{1,2}[.)]\s*)?[*_`]*\s*(?:on\s+)?line\s*#?\s*(\d{1,6})\s*[*_`]*\s*"
    r"(?:[:.)—–-]|,)\s*[*_]*\s*(.*)$", re.I)


@dataclass(frozen=True)
class Candidate:
    line: int
    text: str


def parse_candidates(answer: str) -> list[Candidate]:
    """Every "Line <n>: <comment>" entry of an answer (markdown, bullets and numbering
    tolerated; lines after an entry continue it up to a blank line; code blocks ignored)."""
    out: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    fenced = False
    for raw in answer.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line or line.startswith("```"):
            current = None
            continue
        m = _ENTRY.match(line)
        if m:
            current = [m.group(2)]
            out.append((int(m.group(1)), current))
        elif current is not None:
            current.append(line)
    cands = []
    for no, parts in out:
        text = re.sub(r"\s+", " ", " ".join(parts)).strip().strip("*_").strip()
        if text:
            cands.append(Candidate(no, text))
    return cands


# ------------------------------------------------------------------------------ analysis
@dataclass
class HunkWork:
    file: FileChange
    hunk: Hunk
    unit: Unit
    candidates: list[Candidate] = field(default_factory=list)
    unparsed: int = 0  # answers with no entry that parsed
    off_hunk: int = 0  # entries on a line the hunk does not show
    error: str | None = None
    not_asked: bool = False  # the format watch had stopped the run before its turn
    budget: bool = False  # the run's LLM budget was spent before its turn


def _in_format(answer: str) -> bool:
    return bool(parse_candidates(answer))


def ask(llm: LLMClient, work: HunkWork, opts: ReviewOptions, watch: FormatWatch | None = None) -> None:
    """K answers for one hunk (cached), parsed; the candidates on lines the hunk shows. Not
    asked once `watch` has stopped the run (`llm` halting on it: the model keeps missing the
    format)."""
    try:
        answers = llm.sample(messages(work.file.path, work.hunk), n=opts.candidates,
                             temperature=opts.temperature, max_tokens=opts.comment_tokens,
                             heard=counting(None if watch is None else watch.saw, _in_format))
    except Halted as e:
        work.not_asked, work.error = True, str(e)
        return
    except LLMError as e:
        work.error, work.budget = str(e), isinstance(e, BudgetExceeded)
        return
    shown = {ln.new_no for ln in work.hunk.lines if ln.new_no is not None}
    seen: set[str] = set()
    for answer in answers:
        parsed = parse_candidates(answer)
        if not parsed:
            work.unparsed += 1
        for c in parsed:
            if c.line not in shown:
                work.off_hunk += 1
            elif c.text.lower() not in seen:
                seen.add(c.text.lower())
                work.candidates.append(c)


@dataclass
class Scored:
    work: HunkWork
    candidate: Candidate
    scores: crs.Scores


def pick_order(scored: list[Scored]) -> list[int]:
    """Every candidate's index: each hunk's in the recipe's pick order, the hunks' firsts
    before their seconds, and so on (the higher pick score first among equals)."""
    value = [crs.pick_value(s.scores, RECIPE) for s in scored]
    hunks: dict[str, list[int]] = {}
    for i, s in enumerate(scored):
        hunks.setdefault(s.work.unit.key, []).append(i)
    rank: dict[int, int] = {}
    for members in hunks.values():
        order = recipe.pick_order([value[i] for i in members], [len(scored[i].candidate.text.split())
                                                                for i in members], RECIPE.margin)
        rank.update({members[j]: r for r, j in enumerate(order)})
    return sorted(range(len(scored)), key=lambda i: (rank[i], -value[i], i))


def select(scored: list[Scored], vectors: np.ndarray, opts: ReviewOptions) -> tuple[list[Scored], int]:
    """The kept candidates (in `pick_order`; thresholds, at most max_per_hunk per hunk, no
    near-duplicate of one kept before) and how many were dropped as near-duplicates."""
    order = pick_order(scored)
    kept: list[int] = []
    per_hunk: dict[str, int] = {}
    duplicates = 0
    for i in order:
        s = scored[i]
        if s.scores.rel < opts.min_rel or s.scores.con < opts.min_con:
            continue
        key = s.work.unit.key
        if per_hunk.get(key, 0) >= opts.max_per_hunk:
            continue
        if kept and float(np.max(vectors[kept] @ vectors[i])) >= opts.duplicate:
            duplicates += 1
            continue
        kept.append(i)
        per_hunk[key] = per_hunk.get(key, 0) + 1
    return [scored[i] for i in kept], duplicates


def finding_of(s: Scored, candidates: int) -> Finding:
    c, path = s.candidate, s.work.file.path
    key = hashlib.sha256(f"{s.work.unit.key}\0{c.text}".encode("utf-8", "surrogatepass")).hexdigest()[:24]
    sc = s.scores
    return Finding(
        analyzer="review", title=f"review comment: {c.text[:80]}", message=c.text, path=path,
        start_line=c.line, end_line=c.line, level="notice", scores=sc.as_dict(),
        evidence={"matched": [{"pseudo_ref": m.pseudo_ref, "similarity": round(m.similarity, 4)}
                              for m in sc.matched],
                  "pseudo_references": s.work.unit.pseudo_refs, "candidates_on_hunk": candidates},
        key=key,
    )


def _hunks_to_review(changes: ChangeSet, opts: ReviewOptions, report: AnalyzerReport) -> list[HunkWork]:
    """The code hunks with added lines to review; the others skipped in `report`, each with why."""
    todo: list[HunkWork] = []
    for fc, h in changes.hunks():
        where = f"{fc.path}:{h.span[0]}"
        if fc.language not in CODE_LANGUAGES:  # as EditingRTC: a reviewer of code
            report.skipped.append(Skipped(where, not_code(fc.path, fc.language), "policy", fc.path))
        elif not h.added_lines:
            report.skipped.append(Skipped(where, "no added lines to review", "policy", fc.path))
        elif len(todo) >= opts.max_hunks:
            report.skipped.append(Skipped(where, f"over the limit of {opts.max_hunks} hunks per run", path=fc.path))
        else:
            todo.append(HunkWork(fc, h, Unit(fc, [h], h.key)))
    return todo


def _after_asking(todo: list[HunkWork], watch: FormatWatch, report: AnalyzerReport) -> list[HunkWork]:
    """The hunks that got candidates; those not asked or without any skipped in `report`, with
    why, and a note (or, where no answer was usable, `not_run`) when the answers were out of format."""
    for w in todo:
        if w.not_asked:
            report.skipped.append(Skipped(f"{w.file.path}:{w.hunk.span[0]}", f"not asked: {w.error}",
                                          path=w.file.path))
        elif w.error:
            report.skipped.append(Skipped(f"{w.file.path}:{w.hunk.span[0]}", f"no candidates: {w.error}",
                                          path=w.file.path, budget=w.budget))
    format_note = watch.note(sum(w.not_asked for w in todo))
    if format_note and watch.bad:
        report.notes.append(format_note)
    live = [w for w in todo if w.candidates]
    if not live and watch.bad and not watch.good:
        report.not_run = f"the model's answers were not usable: {watch.good} of {watch.seen} in format"
    return live


class ReviewAnalyzer(AnalyzerInfo):
    name = "review"
    title = "Review"
    help = ("Review: rtcbot's own review comments, several drafted per changed hunk and only the "
            "best kept by CRScore (Rel and Con against the change's claims and smells).")
    options_type = ReviewOptions
    posts_comments = True  # its findings are review comments: the pr-review reporter posts them
    headline = staticmethod(review_view.headline)  # its words (analyzers/presentation.py)
    advice = staticmethod(review_view.advice)
    in_review, comment_note = staticmethod(review_view.in_review), staticmethod(review_view.comment_note)
    labels, count_scores = review_view.LABELS, review_view.COUNTS
    needs = ("embeddings", "smells")  # CRScore keeps the drafts: its embedding model, the smells

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        opts = ctx.config(self.name, ReviewOptions)
        report = AnalyzerReport(self.name, self.title)
        todo = _hunks_to_review(changes, opts, report)
        if not todo:
            report.notes.append("no changed hunks with added lines to review")
            report.not_run = "no changed code with added lines"
            return report
        try:
            llm = ctx.llm
        except (RuntimeError, LLMError) as e:
            report.error = f"the review analyzer needs an LLM: {e}"
            return report
        before = llm.usage.copy()
        watch = FormatWatch('"Line <n>: <comment>"')
        watched = llm.halting(watch.why)
        llm.map(lambda w: ask(watched, w, opts, watch), todo)
        live = _after_asking(todo, watch, report)
        CRScoreAnalyzer().pseudo_references([w.unit for w in live], ctx, report)
        scored = self._score(live, report)
        report.usage = llm.usage.minus(before).as_dict()
        if scored is None:
            return report
        items, vectors = scored
        kept, duplicates = select(items, vectors, opts)
        per_hunk = {id(w): len(w.candidates) for w in todo}
        report.findings = [finding_of(s, per_hunk[id(s.work)]) for s in kept]
        unparsed, off = sum(w.unparsed for w in todo), sum(w.off_hunk for w in todo)
        if off:
            report.notes.append(f"{off} candidate(s) were on lines the hunk does not show")
        report.notes.append(f"{len(items)} candidates on {len(live)} hunk(s); {len(kept)} kept "
                            f"(Rel ≥ {opts.min_rel}, Con ≥ {opts.min_con}, at most {opts.max_per_hunk} "
                            f"per hunk), {duplicates} near-duplicate(s) dropped")
        report.scores = {"hunks": float(len(todo)), "candidates": float(len(items)),
                         "kept": float(len(kept)), "duplicates": float(duplicates),
                         "unparsed": float(unparsed)}
        if kept:
            report.scores["rel"] = round(sum(s.scores.rel for s in kept) / len(kept), 4)
        return report

    def _score(self, live: list[HunkWork], report: AnalyzerReport) -> tuple[list[Scored], np.ndarray] | None:
        """Every candidate's CRScore (rtcbot recipe) against its hunk's pseudo-references, and each
        candidate's embedding (for the near-duplicates); None when the model cannot load."""
        pairs = [(w, c) for w in live for c in w.candidates]
        try:
            embedder = shared_embedder()
            results = crs.score_reviews(embedder, [(c.text, w.unit.pseudo_refs) for w, c in pairs], None,
                                        recipe=RECIPE)
            vectors = embedder.embed([c.text for _, c in pairs])
        except EmbeddingError as e:
            report.error = str(e)
            return None
        items = [Scored(w, c, s) for (w, c), s in zip(pairs, results, strict=True)]
        return items, vectors
