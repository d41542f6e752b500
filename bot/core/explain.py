"""`explain`: the evidence behind one score, in words, as a reply on the pull request (the App's
`@<slug> explain`, the Action's issue_comment workflow). Pure.

Which finding: the one whose lines hold `path:line`, or the one a comment of rtcbot's marks
(its marker key, reporters/pr_review.py `key_of`). What it says: the finding's title, place,
figures and message, then — where the evidence holds regenerated code and the real edit is
known (the hunk at the head) — each regeneration against the real edit as a diff, then every
piece of its evidence (descriptions, the baseline, the claims and smells covered and missed,
the rule, the fix and both oracles' verdicts), as the check run shows it. Every piece that is
not rtcbot's (a model's text, a commenter's, code, a path) is inert (reporters/untrusted.py)
or a code block fenced longer than any backtick run in it.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.report import Finding
from reporters import readable
from reporters.pr_review import key_of
from reporters.untrusted import code, fenced, inert

MAX_DIFFS = 5  # regenerations shown as diffs
MAX_EVIDENCE_CHARS = 12_000


def at_line(findings: Iterable[Finding], path: str, line: int) -> list[Finding]:
    """The findings whose lines hold `path:line` (the narrowest first)."""
    hits = [f for f in findings if f.path == path and f.start_line is not None
            and f.start_line <= line <= (f.end_line or f.start_line)]
    return sorted(hits, key=lambda f: ((f.end_line or f.start_line or 0) - (f.start_line or 0)))


def marked(findings: Iterable[Finding], key: str) -> list[Finding]:
    """The finding a comment of rtcbot's marks with `key` (its marker)."""
    return [f for f in findings if key_of(f) == key]


def real_edit(changes: ChangeSet, f: Finding) -> str | None:
    """The code after the edit a finding scored (its hunk at the head: context and added
    lines), found by the hunk's key; None when the change no longer holds that hunk."""
    for fc, h in changes.hunks():
        if fc.path == f.path and h.key == f.key:
            return h.new_code
    return None


def hunk_at(changes: ChangeSet, path: str, line: int) -> ChangeSet | None:
    """The change narrowed to the hunk whose new-side lines hold `path:line` (what the Action's
    `explain`, which has no stored findings, analyses afresh); None when no hunk holds it."""
    for fc, h in changes.hunks():
        if fc.path == path and h.new_start <= line < h.new_start + max(h.new_count, 1):
            return ChangeSet([dataclasses.replace(fc, hunks=[h])])
    return None


def _diff(real: str, regenerated: str) -> str:
    lines = difflib.unified_diff(real.splitlines(), regenerated.splitlines(), "the real edit",
                                 "regenerated", lineterm="", n=2)
    return "\n".join(lines) or "(no difference: the model re-created the edit)"


def _diffs(f: Finding, real: str) -> list[str]:
    """Each regeneration against the real edit, under the description it came from (what the
    finding's analyzer says its model wrote back: its `regenerations`)."""
    said = registry.regenerations(f)
    if said is None:
        return []
    regenerated, described = said.regenerated, said.descriptions
    out = ["### The regenerated code against the real edit", "",
           "`-` lines: the real edit (the code after it); `+` lines: what the model wrote back from "
           "the description.", ""]
    for i, regen in enumerate(regenerated[:MAX_DIFFS], 1):
        about = described[i - 1] if i - 1 < len(described) else ""
        out.append(f"{i}. From the description: {inert(about) if about.strip() else '(none)'}")
        out += [f"   {ln}" if ln else "" for ln in fenced(_diff(real, regen), "diff")]
    if said.baseline is not None:
        out.append(f"{len(regenerated[:MAX_DIFFS]) + 1}. From the uninformative baseline description (\"Edit.\"):")
        out += [f"   {ln}" if ln else "" for ln in fenced(_diff(real, said.baseline), "diff")]
    return [*out, ""]


def explain_markdown(f: Finding, *, real: str | None = None) -> str:
    """The reply that explains `f`: what it scored, why, and the evidence (see the module)."""
    try:
        title = registry.get(f.analyzer).title
    except Exception:  # an analyzer this build does not have: its id
        title = f.analyzer
    where = readable.where(f)
    lines = [f"**Why {inert(title)} scored this**" + (f" at {code(where)}" if where else "") + ":", "",
             f"**{inert(f.title)}**" + (f" ({readable.figures(f.scores)})" if f.scores else ""), ""]
    if f.message:
        lines += [inert(f.message, block=True), ""]
    if real is not None:
        lines += _diffs(f, real)
    if f.evidence:
        lines += ["### The evidence", "", readable.evidence_markdown(f, MAX_EVIDENCE_CHARS)]
    return "\n".join(lines).rstrip() + "\n"
