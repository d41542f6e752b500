"""What no analyzer analysed, said once for every report: each file once, with its reasons,
the hunks left out and the analyses that left them, grouped by reason. Pure.

Analyzers each list what they skipped (EditingRTC a YAML hunk by its header, Review the same
hunk by its first line, every analyzer a deleted file), so a reader saw one file many times.
Here a file is one entry: its reasons in first-seen order, the most hunks any one analysis left
out of it (the analyses count the same hunks), and which analyses did, when not all of them.
Markdown shows at most SHOWN lines (one per file when that fits, else one per reason) and the
whole list in a closed <details> fold; JSON has the entries as data; text, the short lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from analyzers.report import AnalyzerReport
from reporters.untrusted import code, inert

SHOWN = 5  # lines shown before the fold
NAMED = 3  # files named on a reason's line


@dataclass
class Unanalysed:
    """One file (or an item in no file, e.g. "LLM claims") that some analysis did not analyse."""

    what: str  # the file's path, or the item
    reasons: list[str] = field(default_factory=list)
    hunks: int = 0  # hunks (or other parts) of it left out; 0: the whole file
    analyzers: list[str] = field(default_factory=list)  # the titles of the analyses that left it out
    failed: bool = False  # some analysis could not analyse it (a gate on that analysis cannot pass)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def collect(reports: Sequence[AnalyzerReport]) -> list[Unanalysed]:
    """Every file or item some report skipped, once, in first-seen order."""
    out: dict[str, Unanalysed] = {}
    parts: dict[tuple[str, str], set[str]] = {}  # (what, analyzer) → the parts it left out
    for r in reports:
        for s in r.skipped:
            what = s.path or s.item
            entry = out.setdefault(what, Unanalysed(what))
            if s.reason not in entry.reasons:
                entry.reasons.append(s.reason)
            if r.title not in entry.analyzers:
                entry.analyzers.append(r.title)
            entry.failed = entry.failed or s.kind == "failed"
            if s.item != what:
                parts.setdefault((what, r.title), set()).add(s.item)
    for (what, _), items in parts.items():
        out[what].hunks = max(out[what].hunks, len(items))
    return list(out.values())


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _by(entry: Unanalysed, every: Sequence[str]) -> str:
    return "" if set(entry.analyzers) >= set(every) else f" ({', '.join(entry.analyzers)})"


def entry_line(entry: Unanalysed, every: Sequence[str], *, rich: bool = True) -> str:
    """ "- `a.yml`: not code (yaml) — 3 hunks (EditingRTC, Review)"; `rich` False: plain text."""
    name, words = (code, inert) if rich else (str, str)
    hunks = f" — {_count(entry.hunks, 'hunk', 'hunks')}" if entry.hunks else ""
    return f"- {name(entry.what)}: {words('; '.join(entry.reasons))}{hunks}{_by(entry, every)}"


def reason_lines(entries: Sequence[Unanalysed], limit: int = SHOWN, *, rich: bool = True) -> list[str]:
    """One line per reason: how many files, hunks, the first files named; at most `limit`.
    `rich` False: plain text (a terminal)."""
    name, words = (code, inert) if rich else (str, str)
    groups: dict[str, list[Unanalysed]] = {}
    for e in entries:
        for reason in e.reasons:
            groups.setdefault(reason, []).append(e)
    lines = []
    for reason, group in groups.items():
        hunks = sum(e.hunks for e in group)
        count = _count(len(group), "file", "files") + (f", {_count(hunks, 'hunk', 'hunks')}" if hunks else "")
        names = ", ".join(name(e.what) for e in group[:NAMED])
        more = f" and {len(group) - NAMED:,} more" if len(group) > NAMED else ""
        reason = f"**{words(reason)}**" if rich else reason
        lines.append(f"- {reason}: {count} — {names}{more}")
    if len(lines) > limit:
        lines = [*lines[:limit - 1], f"- … and {len(lines) - limit + 1:,} more reasons (in the list below)"]
    return lines


def markdown(reports: Sequence[AnalyzerReport], heading: str = "##") -> list[str]:
    """The "Not analysed" section (none when everything was analysed): at most SHOWN lines,
    the whole list in a closed fold when it is longer."""
    entries = collect(reports)
    if not entries:
        return []
    every = [r.title for r in reports]
    lines = [f"{heading} Not analysed", ""]
    full = [entry_line(e, every) for e in entries]
    if len(full) <= SHOWN:
        return [*lines, *full, ""]
    return [*lines, *reason_lines(entries), "",
            f"<details><summary>Every file not analysed ({len(entries):,})</summary>", "", *full, "",
            "</details>", ""]


def text(reports: Sequence[AnalyzerReport]) -> list[str]:
    """The same for a terminal: one line per file when that fits, else one per reason."""
    entries = collect(reports)
    if not entries:
        return []
    every = [r.title for r in reports]
    if len(entries) <= SHOWN:
        return ["Not analysed:", *(entry_line(e, every, rich=False) for e in entries)]
    return ["Not analysed (every file: --format json):", *reason_lines(entries, rich=False)]


def data(reports: Sequence[AnalyzerReport]) -> list[dict[str, Any]]:
    """The entries as JSON-ready data."""
    return [e.to_dict() for e in collect(reports)]
