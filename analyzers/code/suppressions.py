"""Suppressions in code belong to the team: they count from the base branch, never from the
pull request being scored (all pure).

A pull request's author could otherwise silence the analyses that score it: `# nosemgrep`
(or `# nosem`) on a new line hides a Semgrep finding from AutoFix and from a findings gate;
`// NOPMD`, `@SuppressWarnings("PMD…")` and JSHint's directives (`/* jshint ignore:start */`,
`// jshint ignore:line`, `/* jshint -W061 */`) hide a smell from CRScore's pseudo-references.

- Semgrep runs with `--disable-nosem` (analyzers/semgrep/scan.py), so every finding comes
  back; `semgrep_split` drops only those a base marker covers on the base statement it was
  written for (the marker and every line of the statement unchanged, the statement still the
  one under it), and words one line for each marker the pull request added ("this pull request
  adds `# nosemgrep` at a.py:12; suppressions count from the base branch") and for each base
  marker over a statement the pull request changed or moved under it.
- PMD and JSHint read the code with the directives on the pull request's added lines made
  inert (`neutralise`: the same length, so every line and column stays where it was), in the
  one run they make anyway; the base's directives on unchanged lines work as before.
- `added_markers` counts the suppression comments of every kind (ours and other tools'), so
  that a proposed fix that adds one is refused (analyzers/autofix/checks.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from analyzers.code.diff import Hunk
from analyzers.code.statements import BaseLines, statement_span
from analyzers.semgrep.scan import SemgrepFinding

SCOPE = "suppressions count from the base branch"
_NOSEM = re.compile(r"(?<![A-Za-z0-9_])(nosem(?:grep)?)\b(?:\s*[:=]\s*([\w.\-]+(?:\s*,\s*[\w.\-]+)*))?", re.I)
_ALONE = re.compile(r"^[^A-Za-z0-9]*nosem", re.I)  # a marker alone on its line covers the next
_NOPMD = re.compile(r"NOPMD", re.I)
_SUPPRESS_WARNINGS = re.compile(r"@\s*(?:java\s*\.\s*lang\s*\.\s*)?(SuppressWarnings)\b")
_PMD_STRING = re.compile(r"\"(PMD)\b")
_IGNORE_END = re.compile(r"\s*ignore\s*:\s*end\b", re.I)
_JSHINT = re.compile(r"/([/*])\s*(js[hl]int)\b[ \t]*(ignore)?", re.I)
# other tools' suppressions: a fix that adds one hides a finding from somebody
_OTHER = {
    "# noqa": re.compile(r"#\s*noqa\b", re.I),
    "# type: ignore": re.compile(r"#\s*type:\s*ignore\b"),
    "# nosec": re.compile(r"#\s*nosec\b", re.I),
    "# pylint: disable": re.compile(r"pylint:\s*disable", re.I),
    "eslint-disable": re.compile(r"eslint-disable", re.I),
    "@ts-ignore": re.compile(r"@ts-(?:ignore|nocheck|expect-error)\b"),
    "NOSONAR": re.compile(r"NOSONAR", re.I),
}
_COMMENT = {"python": "#"}


def comment_of(language: str | None) -> str:
    return _COMMENT.get(language or "", "//")


@dataclass(frozen=True)
class AddedSuppression:
    """A suppression marker on a line the pull request added; or (`covers`) a base marker
    above or on a statement the pull request changed, or moved other code under (`moved`), which
    it no longer covers."""

    path: str
    line: int
    marker: str  # our words for it, e.g. "# nosemgrep", "// NOPMD"
    covers: int | None = None  # the first line of the finding under a base marker
    moved: bool = False  # the statement is the base's, but it was not the one under the marker

    def sentence(self) -> str:
        if self.covers is not None:
            did = "puts other code" if self.moved else "changes the code"
            return (f"this pull request {did} at {self.path}:{self.covers} under the `{self.marker}` at "
                    f"{self.path}:{self.line}; a suppression from the base branch covers only the statement it "
                    "covered there, unchanged")
        return f"this pull request adds `{self.marker}` at {self.path}:{self.line}; {SCOPE}"


def _line(lines: Sequence[str], n: int) -> str:
    return lines[n - 1] if 1 <= n <= len(lines) else ""


def semgrep_marker(text: str, rule_id: str, *, alone: bool = False) -> str | None:
    """The Semgrep marker in `text` that covers `rule_id` ("nosemgrep", "nosem"), or None; a
    marker naming rules covers only those. `alone`: only one alone on its line (the line
    above a finding)."""
    if alone and not _ALONE.match(text):
        return None
    for m in _NOSEM.finditer(text):
        ids = [i.strip() for i in (m.group(2) or "").split(",") if i.strip()]
        if not ids or any(rule_id == i or rule_id.endswith("." + i) or i.endswith("." + rule_id) for i in ids):
            return m.group(1).lower()
    return None


def semgrep_split(findings: Iterable[SemgrepFinding], texts: Mapping[str, str],
                  hunks: Mapping[str, Sequence[Hunk]], languages: Mapping[str, str | None]
                  ) -> tuple[list[SemgrepFinding], list[AddedSuppression]]:
    """The findings that stand, and the markers next to them that cover nothing.

    A finding (scanned with `--disable-nosem`) is dropped only when a marker covers it (on its
    first line, or alone on the line above) that is the base's, on the base's statement: the
    marker's line and every line of the statement around the finding (analyzers/code/statements.py)
    unchanged, and the statement under the marker at the base, where it is now (issue #51: a
    pull request that deletes the line under a base marker, or changes a line of the statement,
    leaves it covering nothing). `texts[path]`: the scanned text; `hunks[path]`: the change's."""
    kept: list[SemgrepFinding] = []
    added: dict[tuple[str, int], AddedSuppression] = {}
    for f in findings:
        text = texts.get(f.path, "")
        lines = text.splitlines()
        base = BaseLines(hunks.get(f.path, ()))
        covering = [(n, m) for n, alone in ((f.start_line, False), (f.start_line - 1, True))
                    if (m := semgrep_marker(_line(lines, n), f.rule_id, alone=alone))]
        if not covering:
            kept.append(f)
            continue
        first, last = statement_span(text, languages.get(f.path), f.start_line, f.end_line)
        changed = any(base.of(n) is None for n in range(first, last + 1))
        for n, m in covering:
            at_base = base.of(n)
            if at_base is not None and not changed and base.of(f.start_line) == at_base + (f.start_line - n):
                break  # the team's suppression, from the base, of the statement it was written for
            words = f"{comment_of(languages.get(f.path))} {m}"
            added.setdefault((f.path, n), AddedSuppression(f.path, n, words, None if at_base is None else f.start_line,
                                                           moved=at_base is not None and not changed))
        else:
            kept.append(f)
    return kept, sorted(added.values(), key=lambda a: (a.path, a.line))


# --------------------------------------------------------------------------- smell detectors
def _blank(m: re.Match[str], group: int = 1) -> tuple[int, int]:
    return m.start(group), m.end(group)


def _jshint_words(m: re.Match[str]) -> str:
    words = m.group(2).lower() + (" ignore" if m.group(3) else "")
    return f"// {words}" if m.group(1) == "/" else f"/* {words} */"


def _directives(language: str | None, line: str) -> list[tuple[int, int, str]]:
    """The suppression directives of PMD (Java) or JSHint (JavaScript) on one line: the span
    to make inert, and our words for it."""
    out: list[tuple[int, int, str]] = []
    if language == "java":
        out += [(*_blank(m, 0), "// NOPMD") for m in _NOPMD.finditer(line)]
        out += [(*_blank(m), "@SuppressWarnings") for m in _SUPPRESS_WARNINGS.finditer(line)]
        out += [(*_blank(m), "@SuppressWarnings") for m in _PMD_STRING.finditer(line)]
    elif language == "javascript":
        # an `ignore:end` stays: made inert, it would stretch a base `ignore:start` further
        out += [(*_blank(m, 2), _jshint_words(m)) for m in _JSHINT.finditer(line)
                if not _IGNORE_END.match(line, m.end(2))]
    return out


def neutralise(language: str | None, code: str, lines: Collection[int], path: str = ""
               ) -> tuple[str, list[AddedSuppression]]:
    """`code` with the detector's suppression directives on `lines` (1-based: the pull
    request's added lines) made inert, each character of the directive's keyword replaced by
    `X` (lengths, lines and columns unchanged), and the directives it found there."""
    if language not in ("java", "javascript") or not lines:
        return code, []
    rows = code.split("\n")
    found: list[AddedSuppression] = []
    for n in sorted(lines):
        if not 1 <= n <= len(rows):
            continue
        spans = _directives(language, rows[n - 1])
        if not spans:
            continue
        row = list(rows[n - 1])
        for start, end, _ in spans:
            row[start:end] = "X" * (end - start)
        found += [AddedSuppression(path, n, words) for words in dict.fromkeys(w for _, _, w in spans)]
        rows[n - 1] = "".join(row)
    return "\n".join(rows), found


# --------------------------------------------------------------------------- a fix's markers
def markers(language: str | None, code: str) -> Counter[str]:
    """Every suppression marker in `code`, by kind (our words for it)."""
    out: Counter[str] = Counter()
    for row in code.splitlines():
        out.update(f"{comment_of(language)} {m.group(1).lower()}" for m in _NOSEM.finditer(row))
        for lang in ("java", "javascript"):
            out.update(words for _, _, words in _directives(lang, row))
        out.update(words for words, rx in _OTHER.items() if rx.search(row))
    return out


def added_markers(language: str | None, before: str, after: str) -> list[str]:
    """The suppression markers `after` has more of than `before` (a fix's replacement against
    the flagged lines)."""
    return sorted((markers(language, after) - markers(language, before)).keys())


def summary(added: Sequence[AddedSuppression], limit: int = 5) -> list[str]:
    """One line each (at most `limit`, then one line naming where the others are)."""
    lines = [a.sentence() for a in added[:limit]]
    if len(added) > limit:
        where = ", ".join(f"{a.path}:{a.line}" for a in added[limit:])
        lines.append(f"{len(added) - limit} more suppression comments cover nothing here (at {where}); {SCOPE}")
    return lines
