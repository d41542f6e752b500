"""Dismissals: findings a repository's team judged wrong, remembered so that they do not come
back on the next push or the next pull request (issue #30). Pure: no I/O.

A `Dismissal` names its target one of two ways:

    kind "rule"     `target` is a rule id (a Semgrep rule, `Finding.rule_id`) or an analyzer's
                    key (`editing_rtc`, `autofix`...): every finding of it is dismissed;
    kind "finding"  `target` is one finding's `fingerprint`: that finding, wherever it moves.

and may narrow it to paths (`path_glob`, matched as the config's `ignore` globs are: against
the path or its file name). `split` divides a review's findings into those shown and those
dismissed; the review core applies it once for every surface (bot/core/review.py), and each
dismissed finding is one line of the summary (`line`), never an annotation or a suggestion.

A fingerprint (`Finding.fingerprint`) is stable across line moves and names one finding in its
place: the analyzer, the rule id, the path, the finding's content — the normalised text of its
lines when the caller has it (`code`), else the finding's key, which every analyzer derives from
content (a hunk's code, a rule and its snippet, a comment's text) — and its place in the code's
structure (`Finding.place`: the enclosing definition and the occurrence among identical lines
there, and where they say anything the path of definitions and branches and the number of
identical lines there), never a line number. Twins in two functions, two same-named definitions
or branches, or a copy added anywhere in the definition, are findings of their own; moving the
whole definition keeps the fingerprint.

Fail closed (issue #51): a fingerprint that several current findings share dismisses none of
them; one that a finding had before (another count of identical lines in its definition, the
format before the path, an old-style content-only fingerprint) dismisses nothing: the finding
shows, and the report says which dismissal no longer covers it and why (`ambiguity_notes`). The
review core fingerprints without `code`, so a fingerprint computed later from a stored finding
is the same.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from analyzers.code.diff import is_ignored
from analyzers.report import FINGERPRINT_CHARS, AnalyzerReport, Finding, Place

Kind = Literal["rule", "finding"]
KINDS: tuple[Kind, ...] = ("rule", "finding")
FINGERPRINT_RE = re.compile(rf"[0-9a-f]{{{FINGERPRINT_CHARS}}}")
MAX_TARGET_CHARS = 200
MAX_GLOB_CHARS = 300
MAX_REASON_CHARS = 300  # a reason, whether `@rtcbot ignore … because` or the file gives it
MAX_LOGIN_CHARS = 100
MAX_LINES = 50  # dismissed findings listed in one report's summary; more are counted


@dataclass(frozen=True)
class Dismissal:
    """One dismissal: what (`target`, `kind`, `path_glob`), who (`by`, a GitHub login), when
    (`at`, epoch seconds) and why (`reason`, possibly empty)."""

    target: str
    kind: Kind
    path_glob: str | None
    by: str
    at: float
    reason: str = ""

    def matches(self, f: Finding, fp: str) -> bool:
        """Whether this dismissal covers finding `f`, whose fingerprint is `fp`."""
        if self.kind == "finding":
            hit = self.target == fp
        else:
            hit = self.target in (f.rule_id, f.analyzer)
        if not hit or self.path_glob is None:
            return hit
        return f.path is not None and is_ignored(f.path, [self.path_glob]) is not None

    @property
    def day(self) -> str:
        """When, as a UTC date (YYYY-MM-DD)."""
        return time.strftime("%Y-%m-%d", time.gmtime(self.at))

    def line(self) -> str:
        """The summary's line (plain text; the reporter makes it inert): "dismissed by @x on
        2026-11-26: reason"."""
        where = f" in {self.path_glob}" if self.path_glob else ""
        return f"dismissed by @{self.by} on {self.day}{where}" + (f": {self.reason}" if self.reason else "")


def problem(d: Dismissal) -> str | None:
    """What is wrong with a dismissal, in words (None: nothing): every field bounded, the kind
    one of KINDS, a finding's target a fingerprint."""
    if d.kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}, not {d.kind!r}"
    if not d.target.strip() or len(d.target) > MAX_TARGET_CHARS or any(c.isspace() for c in d.target):
        return f"the target must be one word of 1 to {MAX_TARGET_CHARS} characters"
    if d.kind == "finding" and not FINGERPRINT_RE.fullmatch(d.target):
        return f"a finding is named by its fingerprint ({FINGERPRINT_CHARS} hex digits)"
    if d.path_glob is not None and not (0 < len(d.path_glob) <= MAX_GLOB_CHARS):
        return f"a path glob has 1 to {MAX_GLOB_CHARS} characters"
    if not d.by or len(d.by) > MAX_LOGIN_CHARS:
        return f"who dismissed it must be a login of 1 to {MAX_LOGIN_CHARS} characters"
    if len(d.reason) > MAX_REASON_CHARS:
        return f"a reason has at most {MAX_REASON_CHARS} characters"
    return None


def kind_of(target: str) -> Kind:
    """How a command's word reads: a fingerprint (16 hex digits) names one finding, anything
    else a rule id or an analyzer."""
    return "finding" if FINGERPRINT_RE.fullmatch(target) else "rule"


def fingerprint(f: Finding, code: str | None = None) -> str:
    """A short hex id of `f` that survives line moves: analyzer, rule id, path, content
    (`code`, the text of the finding's lines, normalised, when given; else the finding's
    content key; else its title and message) and place (`Finding.place`) — never a line number
    (`Finding.fingerprint`, which every output shows)."""
    return f.fingerprint(code)


@dataclass(frozen=True)
class Prints:
    """The fingerprints of a list of findings, and which findings a dismissal's fingerprint names:
    the one finding with that fingerprint — never several (a fingerprint two current findings
    share is `shared`: it dismisses none of them). A fingerprint a finding had before, and no
    longer has, names nothing (`earlier` says which finding it was and why it changed)."""

    new: tuple[str, ...]
    findings: tuple[Finding, ...] = ()

    @classmethod
    def of(cls, findings: Sequence[Finding], code: Callable[[Finding], str | None] | None = None) -> Prints:
        texts = [code(f) if code is not None else None for f in findings]
        return cls(tuple(fingerprint(f, t) for f, t in zip(findings, texts, strict=True)), tuple(findings))

    def named(self, target: str) -> list[int]:
        """The index of the one finding `target` names (see the class), else none."""
        hits = [i for i, fp in enumerate(self.new) if fp == target]
        return hits if len(hits) == 1 else []

    def shared(self, target: str) -> list[int]:
        """The findings that share `target` when two or more do (so it names none of them)."""
        hits = [i for i, fp in enumerate(self.new) if fp == target]
        return hits if len(hits) > 1 else []

    def earlier(self) -> dict[str, list[tuple[int, str]]]:
        """Each fingerprint a finding had before and has no more: which findings, and why."""
        out: dict[str, list[tuple[int, str]]] = {}
        for i, f in enumerate(self.findings):
            for fp, why in earlier_prints(f).items():
                if fp not in self.new:
                    out.setdefault(fp, []).append((i, why))
        return out


MAX_COUNT_TRIED = 8  # earlier counts of identical lines tried above the present one


def earlier_prints(f: Finding) -> dict[str, str]:
    """The fingerprints `f` had before, each with why it no longer has it: an old-style one
    (content only); the one before fingerprints named the path of definitions and branches; the
    one it had while its definition held another number of identical lines."""
    out = {f.legacy_fingerprint(): "it is an old-style fingerprint (content only), which no longer dismisses anything"}
    p = f.place
    if p is None:
        return out
    if p.path:
        out.setdefault(f.fingerprint_at(Place(p.definition, p.occurrence)),
                       "fingerprints now name the path of definitions and branches around a finding and the "
                       f"number of identical lines in its definition ({p.path or p.definition or 'the module'})")
    inside = p.definition or "the module"
    for count in range(1, p.count + MAX_COUNT_TRIED + 1):
        for occurrence in range(count) if count != p.count else ():
            out.setdefault(f.fingerprint_at(dataclasses.replace(p, occurrence=occurrence, count=count)),
                           f"{inside} held {count} identical {'line' if count == 1 else 'lines'} like it when the "
                           f"dismissal was made and holds {p.count} now")
    return out


def split(findings: Iterable[Finding], dismissals: Sequence[Dismissal],
          code: Callable[[Finding], str | None] | None = None,
          ) -> tuple[list[Finding], list[tuple[Finding, Dismissal]]]:
    """The findings no dismissal covers, and each dismissed one with the first dismissal that
    covers it (in the order given). `code`: the text of a finding's lines, where known. A
    fingerprint that several findings share dismisses none of them."""
    listed = list(findings)
    if not dismissals:
        return listed, []
    prints = Prints.of(listed, code)
    named = {d.target: set(prints.named(d.target)) for d in dismissals if d.kind == "finding"}
    kept: list[Finding] = []
    dismissed: list[tuple[Finding, Dismissal]] = []
    for i, f in enumerate(listed):
        d = next((d for d in dismissals
                  if (d.kind == "rule" or i in named[d.target]) and d.matches(f, prints.new[i])), None)
        if d is None:
            kept.append(f)
        else:
            dismissed.append((f, d))
    return kept, dismissed


def ambiguity_notes(findings: Sequence[Finding], dismissals: Sequence[Dismissal]) -> list[str]:
    """One line (plain text) for each dismissal of a fingerprint that several findings share (it
    dismisses none of them) or that one finding had before and has no more (it dismisses
    nothing there), saying where they are and why."""
    prints = Prints.of(findings)
    out: list[str] = []
    wanted = [d for d in dismissals if d.kind == "finding"]
    earlier = prints.earlier() if any(not prints.named(d.target) for d in wanted) else {}
    for d in wanted:
        if hits := prints.shared(d.target):
            where = ", ".join(_where(findings[i]) for i in hits[:10])
            out.append(f"The dismissal of {d.target} by @{d.by} names a fingerprint that {len(hits)} findings share "
                       f"({where}), so it dismisses none of them.")
        elif not prints.named(d.target):
            out += [f"The dismissal of {d.target} by @{d.by} no longer covers {_where(findings[i])} (fingerprint "
                    f"{prints.new[i]}): {why}; it dismisses nothing there. If it is still meant, dismiss it again "
                    "by its fingerprint now." for i, why in earlier.get(d.target, [])[:10]]
    return out


def _where(f: Finding) -> str:
    return f"{f.path}:{f.start_line}" if f.path and f.start_line else (f.path or f.analyzer)


def summary_line(f: Finding, d: Dismissal) -> str:
    """One dismissed finding in the summary (plain text): where, what, its fingerprint (what
    `@rtcbot unignore` names) and who dismissed it, when and why."""
    return f"{_where(f)} {(f.title or f.analyzer)[:120]} (fingerprint {fingerprint(f)}): {d.line()}"


def dismiss(report: AnalyzerReport, dismissals: Sequence[Dismissal]) -> int:
    """Take the dismissed findings out of `report` (before it is judged and published): each
    becomes one line of `report.dismissed` (MAX_LINES, then a count); how many. A dismissal
    whose fingerprint several findings share, or that a finding had before, dismisses none of
    them, and is a note."""
    if not dismissals or not report.findings:
        return 0
    report.notes.extend(ambiguity_notes(report.findings, dismissals))
    report.findings, gone = split(report.findings, dismissals)
    lines = [summary_line(f, d) for f, d in gone]
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"… and {len(lines) - MAX_LINES} more dismissed findings"]
    report.dismissed.extend(lines)
    return len(gone)
