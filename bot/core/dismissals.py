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
there), never a line number. Twins in two functions, or a copy added below one, are findings of
their own; moving the whole definition keeps the fingerprint. An old-style fingerprint (content
only, `Finding.legacy_fingerprint`) still dismisses the one finding it names, until the next
release; one that several findings share dismisses none of them, and the report says so
(`ambiguity_notes`). The review core fingerprints without `code`, so a fingerprint computed later
from a stored finding is the same.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from analyzers.code.diff import is_ignored
from analyzers.report import FINGERPRINT_CHARS, AnalyzerReport, Finding

Kind = Literal["rule", "finding"]
KINDS: tuple[Kind, ...] = ("rule", "finding")
FINGERPRINT_RE = re.compile(rf"[0-9a-f]{{{FINGERPRINT_CHARS}}}")
MAX_TARGET_CHARS = 200
MAX_GLOB_CHARS = 300
MAX_REASON_CHARS = 500
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
    """The fingerprints of a list of findings, new and old (`Finding.legacy_fingerprint`), and
    which findings a dismissal's fingerprint names: those with that fingerprint; else, for one
    release, the one finding whose old fingerprint it is — never several (an old fingerprint
    that twins in two definitions share is `ambiguous`: it dismisses none of them)."""

    new: tuple[str, ...]
    old: tuple[str, ...]

    @classmethod
    def of(cls, findings: Sequence[Finding], code: Callable[[Finding], str | None] | None = None) -> Prints:
        texts = [code(f) if code is not None else None for f in findings]
        return cls(tuple(fingerprint(f, t) for f, t in zip(findings, texts, strict=True)),
                   tuple(f.legacy_fingerprint(t) for f, t in zip(findings, texts, strict=True)))

    def named(self, target: str) -> list[int]:
        """The indexes of the findings `target` names (see the class)."""
        new = [i for i, fp in enumerate(self.new) if fp == target]
        old = [i for i, fp in enumerate(self.old) if fp == target]
        return new or (old if len(old) == 1 else [])

    def ambiguous(self, target: str) -> list[int]:
        """The findings that share `target` as their old fingerprint, when it names none of
        them (two or more, and no finding has it as its new fingerprint)."""
        old = [i for i, fp in enumerate(self.old) if fp == target]
        return old if len(old) > 1 and target not in self.new else []


def split(findings: Iterable[Finding], dismissals: Sequence[Dismissal],
          code: Callable[[Finding], str | None] | None = None,
          ) -> tuple[list[Finding], list[tuple[Finding, Dismissal]]]:
    """The findings no dismissal covers, and each dismissed one with the first dismissal that
    covers it (in the order given). `code`: the text of a finding's lines, where known."""
    listed = list(findings)
    if not dismissals:
        return listed, []
    prints = Prints.of(listed, code)
    named = {d.target: set(prints.named(d.target)) for d in dismissals if d.kind == "finding"}
    kept: list[Finding] = []
    dismissed: list[tuple[Finding, Dismissal]] = []
    for i, f in enumerate(listed):
        fp = prints.new[i]
        d = next((d for d in dismissals
                  if d.matches(f, d.target if d.kind == "finding" and i in named[d.target] else fp)), None)
        if d is None:
            kept.append(f)
        else:
            dismissed.append((f, d))
    return kept, dismissed


def ambiguity_notes(findings: Sequence[Finding], dismissals: Sequence[Dismissal]) -> list[str]:
    """One line (plain text) for each dismissal whose old fingerprint several findings share:
    it dismisses none of them, and says where they are."""
    prints = Prints.of(findings)
    out: list[str] = []
    for d in dismissals:
        hits = prints.ambiguous(d.target) if d.kind == "finding" else []
        if hits:
            where = ", ".join(f"{_where(findings[i])} (fingerprint {prints.new[i]})" for i in hits[:10])
            out.append(f"The dismissal of {d.target} by @{d.by} names an old-style fingerprint that {len(hits)} "
                       f"findings share ({where}), so it dismisses none of them: dismiss the one meant by "
                       "its own fingerprint.")
    return out


def _where(f: Finding) -> str:
    return f"{f.path}:{f.start_line}" if f.path and f.start_line else (f.path or f.analyzer)


def summary_line(f: Finding, d: Dismissal) -> str:
    """One dismissed finding in the summary (plain text): where, what, its fingerprint (what
    `@rtcbot unignore` names) and who dismissed it, when and why."""
    fp = fingerprint(f)
    named = f"fingerprint {fp}" + (f", named by its old fingerprint {d.target}"
                                   if d.kind == "finding" and d.target != fp else "")
    return f"{_where(f)} {(f.title or f.analyzer)[:120]} ({named}): {d.line()}"


def dismiss(report: AnalyzerReport, dismissals: Sequence[Dismissal]) -> int:
    """Take the dismissed findings out of `report` (before it is judged and published): each
    becomes one line of `report.dismissed` (MAX_LINES, then a count); how many. A dismissal
    whose old fingerprint several findings share dismisses none of them, and is a note."""
    if not dismissals or not report.findings:
        return 0
    report.notes.extend(ambiguity_notes(report.findings, dismissals))
    report.findings, gone = split(report.findings, dismissals)
    lines = [summary_line(f, d) for f, d in gone]
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"… and {len(lines) - MAX_LINES} more dismissed findings"]
    report.dismissed.extend(lines)
    return len(gone)
