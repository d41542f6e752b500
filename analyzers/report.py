"""The one result shape every analyzer returns: AnalyzerReport, its Findings, Fixes and
Skipped items.

Every output (reporters/: check runs, workflow commands, step summary, SARIF, text / JSON /
Markdown) reads `AnalyzerReport`; a new analyzer or a new output is one new module, never a
new shape. What other code reads is a typed field (`comment_id`, `cwe`, `tags`, `rule_id`,
`rule_description`); `evidence` is for display only. Outputs live in reporters/, not here.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal

Level = Literal["notice", "warning", "failure"]
LEVELS: tuple[Level, ...] = ("notice", "warning", "failure")


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in `text` (at least three), so that the
    text inside a code block fenced with it can never close the block early."""
    return "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))


FINGERPRINT_CHARS = 16  # hex digits of Finding.fingerprint: 64 bits, short enough to type


def normalise_code(code: str) -> str:
    """The text of lines without what formatting moves: each line stripped, runs of blanks made
    one, blank lines dropped."""
    lines = (" ".join(ln.split()) for ln in code.splitlines())
    return "\n".join(ln for ln in lines if ln)


def _digest(parts: list[str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:FINGERPRINT_CHARS]


@dataclass
class Fix:
    """A proposed replacement of lines [start_line, end_line] (1-based, inclusive) of `path`."""

    path: str
    start_line: int
    end_line: int
    replacement: str
    diff: str = ""

    @property
    def suggestion(self) -> str:
        """The fix as a GitHub suggestion block, fenced longer than any backtick run in the
        (model-written) replacement, so that its text can never close the block early."""
        body = self.replacement if self.replacement.endswith("\n") or not self.replacement else self.replacement + "\n"
        fence = fence_for(body)
        return f"{fence}suggestion\n{body}{fence}"


class Inconclusive(StrEnum):
    """Why a finding's evidence says nothing about the change, only about the model: the item
    is "inconclusive", counted apart from the scored ones, given no advice, and a gate over its
    analyzer cannot pass over it unless the config says so (bot/core/gate.py). The words each
    reason is said in are its `words`."""

    BASELINE = "baseline"  # the model failed the item's own baseline
    EVERY_ITEM = "every_item"  # the model failed every item of the run
    EMBEDDED = "embedded"  # the embedded model: too small to judge a change
    UNQUALIFIED = "unqualified"  # a qualification record of the repository does not qualify the model

    @property
    def words(self) -> str:
        """The reason as an author reads it, after "inconclusive: "."""
        return INCONCLUSIVE_WORDS[self]


INCONCLUSIVE_WORDS: dict[Inconclusive, str] = {
    Inconclusive.BASELINE: 'the model could not give back the unchanged lines when asked for an unspecified "Edit."',
    Inconclusive.EVERY_ITEM: "the model could not re-create any change of this run",
    Inconclusive.EMBEDDED: "the embedded model is too small to judge a change",
    Inconclusive.UNQUALIFIED: "the model that ran is not qualified for this repository: see docs/qualify.md",
}


@dataclass(frozen=True)
class Place:
    """Where a finding sits in the code's structure, without a line number (analyzers/code/place.py
    finds it): the innermost definition around its first line, in words ("function cleanup",
    "method Cart.total"; "" at module level or in a file that cannot be read as its language),
    and how many identical runs of lines (normalised) come before it from that definition's
    first line. It survives a move of the whole definition; a twin in another definition, or a
    copy below it in the same one, has a place of its own.

    `path` names the whole path of definitions and branches around it where that says more than
    `definition` (same-named definitions by their order, "#2/3"; a property's accessor; an
    `if`/`else` arm, an `except` clause; a JavaScript object literal's keys), else "". `count`:
    the identical runs in the definition in all. Both are part of the fingerprint where they
    say anything (a path, a count other than 1), so a copy added anywhere in the definition, or
    a same-named sibling, changes every fingerprint there: a dismissal covers a line only while
    the definition holds as many identical lines as when it was made."""

    definition: str
    occurrence: int = 0
    path: str = ""
    count: int = 1

    @property
    def specific(self) -> bool:
        """Whether the place says more than the definition and the occurrence (what a fingerprint
        before Integrity III named)."""
        return bool(self.path) or self.count != 1


@dataclass
class Finding:
    """One scored item: a hunk, a review comment, a Semgrep finding, a program.

    `scores` holds the numbers (e.g. {"rtc": 0.33, "lift": 0.33}); `evidence` holds what a
    reviewer needs to trust them (descriptions, regenerated code, matched references) and is
    for display only: no code reads a key of it. What code reads is typed: the review comment
    the finding is about (`comment_id`), the rule's CWE ids and tags, its description.
    """

    analyzer: str
    title: str
    message: str = ""
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    level: Level = "notice"
    scores: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    rule_id: str | None = None
    key: str = ""
    fix: Fix | None = None
    comment_id: int | str | None = None  # the review comment scored (CRScore)
    cwe: list[str] = field(default_factory=list)  # e.g. ["CWE-89"] (the rule's metadata)
    tags: list[str] = field(default_factory=list)  # the rule's tags, e.g. ["security"]
    rule_description: str = ""  # what the rule `rule_id` flags, in its own words
    place: Place | None = None  # where it sits in the code's structure (what its fingerprint names)
    # set when the evidence says nothing about the change (Inconclusive): no advice, not scored
    inconclusive: Inconclusive | None = None
    # what the evidence shows the model missed, as its analyzer words it for the author's advice
    # (EditingRTC: the added lines no regeneration carried); the change's text, rendered inert
    missed: list[str] = field(default_factory=list)
    # about lines the change removed only: the head has no such line, so `start_line` is the head
    # line where they were (an annotation's place) and no output may present it as that line's
    on_removed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def fingerprint(self, code: str | None = None) -> str:
        """A short hex id that survives line moves (what a team names to dismiss this finding,
        bot/core/dismissals.py, and what every output shows): analyzer, rule id, path, content —
        `code`, the text of the finding's lines, normalised, when given; else the content key;
        else title and message — and its `place` (definition, occurrence, and where they say
        anything, path and count) where it has one; never a line number. A finding without a
        place has its `legacy_fingerprint`."""
        return self.fingerprint_at(self.place, code)

    def fingerprint_at(self, place: Place | None, code: str | None = None) -> str:
        """The fingerprint this finding has at `place` (what `fingerprint` uses; bot/core/dismissals.py
        asks it for the places a dismissal may have been made at, to say why it no longer covers)."""
        parts = [self.analyzer, self.rule_id or "", self.path or "", self._content(code)]
        if place is not None:
            parts += ["place", place.definition, str(place.occurrence)]
            if place.specific:
                parts += ["path", place.path, "of", str(place.count)]
        return _digest(parts)

    def legacy_fingerprint(self, code: str | None = None) -> str:
        """The fingerprint before `place` was part of it (content only: twins in two functions
        share it). It dismisses nothing any more (a copy in another function was the one finding
        it named whenever the original was not reported); bot/core/dismissals.py says which
        finding a dismissal that names one meant, and its fingerprint now."""
        return _digest([self.analyzer, self.rule_id or "", self.path or "", self._content(code)])

    def _content(self, code: str | None) -> str:
        if code is not None:
            return normalise_code(code)
        return self.key or normalise_code(f"{self.title}\n{self.message}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        data = dict(data)
        for derived in ("fingerprint", "advice"):  # what the JSON output adds: never stored
            data.pop(derived, None)
        fix = data.pop("fix", None)
        place = data.pop("place", None)
        why = data.pop("inconclusive", None)
        return cls(**data, fix=Fix(**fix) if fix else None, place=Place(**place) if place else None,
                   inconclusive=Inconclusive(why) if why else None)


# said in every report whose scores came from the embedded model (the fact: AnalyzerReport.embedded)
EMBEDDED_NOTE = ("These scores come from the embedded 135M model, which only shows the pipeline working: "
                 "point rtcbot at a larger model (llm-base-url) before trusting them.")
# How a gate's reason starts when it cannot pass over what an analyzer left unanalysed
# (bot/core/gate.py writes it, the check run shows it)
GATE_CANNOT_PASS = "The gate cannot pass: "


class CannotPass(str):
    """A gate's reason that it cannot pass over an analyzer, told apart from an alternative that
    holds by its type: the sentence (GATE_CANNOT_PASS, then `why`) wherever it is said whole,
    `why` alone where an output says the first words its own way."""

    why: str

    def __new__(cls, why: str) -> CannotPass:
        said = super().__new__(cls, GATE_CANNOT_PASS + why)
        said.why = why
        return said
SkipKind = Literal["policy", "failed"]
SKIP_KINDS: tuple[SkipKind, ...] = ("policy", "failed")


@dataclass
class Skipped:
    """Something the analyzer did not look at, and why ("no findings" is never silence).

    `kind` says which: "policy", left out on purpose (an ignore glob, a binary or deleted
    file, a file in a language the analyzer is not made for); "failed", the analyzer could not
    analyse it (a size limit, a tool's error, a parse failure, a budget cut). A gate on the
    analyzer's findings or scores never passes over a "failed" item (bot/core/gate.py). "failed"
    is the default: an analyzer that does not say fails closed."""

    item: str
    reason: str
    kind: SkipKind = "failed"
    # the file when the item is that file or one of its hunks ("" for anything else: a comment, a
    # region, a finding, "LLM claims"): outputs name each file once, with the hunks left out
    path: str = ""
    count: int = 1  # how many things it stands for: the files GitHub did not list are one item
    # a code file an ignore glob spared from this analyzer (it asks a model; the scans that cost
    # nothing read the file): a gate that finds no metric of this analyzer says why (bot/core/gate.py)
    spared: bool = False
    budget: bool = False  # an LLM budget ran out before it (bot/core/review.py's exit message counts these)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Skipped:
        """A stored item; one stored before `kind` existed was published as "skipped" without
        failing a gate, and reads back as "policy" (what it was judged as)."""
        kind = data.get("kind", "policy")
        return cls(str(data["item"]), str(data["reason"]), kind if kind in SKIP_KINDS else "failed",
                   str(data.get("path") or ""), int(data.get("count", 1)), bool(data.get("spared", False)),
                   bool(data.get("budget", False)))


@dataclass
class AnalyzerReport:
    name: str  # the analyzer's id, e.g. "editing_rtc" (as on Analyzer)
    title: str  # its display title, e.g. "EditingRTC" (as on Analyzer)
    findings: list[Finding] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)  # aggregate figures
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)  # requests, tokens, cache hits
    error: str | None = None  # set when the analyzer could not run at all
    # findings the repository's team dismissed (bot/core/dismissals.py), one plain line each:
    # shown in the summary, never annotated, suggested or counted as findings
    dismissed: list[str] = field(default_factory=list)
    # why the analyzer did not run over this change, in a few words ("no test command", "no
    # review comments", "the model's answers were not usable: 0 of 8 in format"); "" when it ran.
    # Outputs say "not run" and why, never a result.
    not_run: str = ""
    # how many items (hunks, comments) it set out to score, when it counts them, and why it
    # scored fewer ("" when it scored them all): "3 of 9 hunks scored (LLM budget)"
    planned: int = 0
    cut_by: str = ""
    # facts the outputs decide on (their words are in `notes`): the embedded model scored it
    # (every output warns), an LLM budget stopped it part way (the exit message names it)
    embedded: bool = False
    stopped_by_budget: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for s in out["skipped"]:  # an item that stands for one thing says no count (nor spared when not)
            if s["count"] == 1:
                del s["count"]
            for fact in ("spared", "budget"):
                if not s[fact]:
                    del s[fact]
        for fact in ("embedded", "stopped_by_budget"):  # said only when true: a report's JSON as before
            if not out[fact]:
                del out[fact]
        out["notes"] = self.said
        return out

    @property
    def said(self) -> list[str]:
        """The notes as published: the analyzer's, then the embedded model's warning where it scored."""
        return [*self.notes, EMBEDDED_NOTE] if self.embedded else list(self.notes)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnalyzerReport:
        data = dict(data)
        if "analyzer" in data:  # the shape before name/title: analyzer = id, name = title
            data["title"] = data.pop("name", "")
            data["name"] = data.pop("analyzer")
        findings = [Finding.from_dict(f) for f in data.pop("findings", [])]
        skipped = [Skipped.from_dict(s) for s in data.pop("skipped", [])]
        # the warning is published among the notes (to_dict); stored before `embedded` existed, it
        # was only there: read back as the fact
        notes = list(data.pop("notes", []))
        data["embedded"] = bool(data.get("embedded")) or EMBEDDED_NOTE in notes
        return cls(**data, findings=findings, skipped=skipped, notes=[n for n in notes if n != EMBEDDED_NOTE])

    @property
    def unanalysed(self) -> list[Skipped]:
        """What the analyzer could not analyse (kind "failed"): a gate on it cannot pass."""
        return [s for s in self.skipped if s.kind == "failed"]

    @property
    def conclusive(self) -> list[Finding]:
        """The findings whose evidence says something about the change."""
        return [f for f in self.findings if f.inconclusive is None]

    @property
    def inconclusive(self) -> list[Finding]:
        """The findings whose evidence says nothing about the change (Inconclusive)."""
        return [f for f in self.findings if f.inconclusive is not None]

    def lowest(self, score: str, n: int = 5) -> list[Finding]:
        """The n conclusive findings with the lowest value of `score`."""
        scored = [f for f in self.conclusive if score in f.scores]
        return sorted(scored, key=lambda f: f.scores[score])[:n]

