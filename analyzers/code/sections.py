"""A diff's text cut into one section per file, each checked against its hunk headers.

A pull request's diff is a stranger's text: a hunk header may claim a billion lines, a body may
hold more or fewer lines than its header says (the extra ones would be silently dropped, the
missing ones read from the next file). Here, before any parser sees it:

- `file_sections` cuts the diff at each file (`diff --git`, else each `---`/`+++` pair outside a
  hunk), so one bad file never stops the others;
- `hunk_problem` says why one section cannot be trusted, or None;
- `section_name` names a section's file for a report, before parsing;
- `repo_path` turns a header's file name into a repository path, and says why it is unsafe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzers.code.paths import path_problem, printable, unquote_git

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r'^diff --git (?:"(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|.+?)\s*$')

# No file has more lines than this: a hunk header beyond it is refused, never allocated for.
MAX_LINE_NUMBER = 1_000_000


def _strip_prefix(p: str) -> str:
    return p[2:] if p[:2] in ("a/", "b/") else p


def repo_path(raw: str | None) -> tuple[str | None, str | None]:
    """A file name from a diff header → (the repository path, why it is unsafe or None).
    Git's C-quoted names are unquoted; `a/`/`b/` prefixes dropped; /dev/null is no file."""
    if raw is None or raw == "/dev/null":
        return None, None
    try:
        name = unquote_git(raw)
    except ValueError as e:
        return printable(raw), str(e)
    if name == "/dev/null":
        return None, None
    path = _strip_prefix(name)
    problem = path_problem(path)
    return (printable(path), problem) if problem else (path, None)


def _bounded(num: str | None, default: int = 1) -> int:
    """A hunk header number; one of more than 9 digits is never converted (Python refuses
    very long ones, and it is beyond MAX_LINE_NUMBER anyway)."""
    if num is None:
        return default
    return int(num) if len(num) <= 9 else MAX_LINE_NUMBER + 1


def hunk_counts(header: str) -> tuple[int, int, int, int] | None:
    m = _HUNK_HEADER.match(header)
    if m is None:
        return None
    return (_bounded(m.group(1)), _bounded(m.group(2)), _bounded(m.group(3)),
            _bounded(m.group(4)))


def hunk_problem(lines: Sequence[str]) -> str | None:
    """Why one file's section cannot be trusted: a hunk header out of bounds, or a body whose
    line counts disagree with its header (the extra lines would be silently dropped, the
    missing ones read from the next file). None when every hunk agrees."""
    old = new = 0
    header = ""
    after = False  # right after a complete hunk: a body line here would be dropped
    for ln in lines:
        counts = hunk_counts(ln)
        if counts is not None:
            if old or new:
                return f"hunk {header!r} has fewer lines than its header says"
            header = ln.split(" @@", 1)[0][:60] + " @@"
            old_start, old, new_start, new = counts
            if max(old_start + old, new_start + new) > MAX_LINE_NUMBER + 1:
                return f"hunk header {header!r} is beyond line {MAX_LINE_NUMBER:,}"
            after = not (old or new)
            continue
        if not header:
            continue  # file header lines
        kind = ln[:1]
        if not (old or new):
            if not after or ln.strip() == "" or kind == "\\":
                continue  # a separating blank line; "\ No newline at end of file"
            if kind in ("+", "-", " ") and ln.rstrip("\n") not in ("-- ", "---"):
                return f"hunk {header!r} has more lines than its header says"
            after = False  # text after the diff (a signature, the next mail): not a hunk's
            continue
        if kind in (" ", "\n", ""):
            old, new = old - 1, new - 1
        elif kind == "-":
            old -= 1
        elif kind == "+":
            new -= 1
        elif kind != "\\":
            return f"hunk {header!r} has fewer lines than its header says"
        if old < 0 or new < 0:
            return f"hunk {header!r} has more lines than its header says"
        after = not (old or new)
    if old or new:
        return f"hunk {header!r} has fewer lines than its header says"
    return None


def file_sections(lines: Sequence[str]) -> list[list[str]]:
    """The diff cut into one section per file: at each `diff --git` line when there are any,
    else at each `---`/`+++` pair outside a hunk (hunk bodies counted by their headers)."""
    git = any(ln.startswith("diff --git ") for ln in lines)
    out: list[list[str]] = []
    cur: list[str] = []
    old = new = 0
    for i, ln in enumerate(lines):
        if git:
            starts = ln.startswith("diff --git ")
        else:
            starts = (old <= 0 and new <= 0 and ln.startswith("--- ")
                      and i + 1 < len(lines) and lines[i + 1].startswith("+++ "))
        if starts and cur:
            out.append(cur)
            cur = []
        cur.append(ln)
        if git:
            continue
        counts = hunk_counts(ln)
        if counts is not None:
            old, new = counts[1], counts[3]
            if max(counts[0] + old, counts[2] + new) > MAX_LINE_NUMBER + 1:
                old = new = 0  # refused later; never let it swallow the files after it
        elif old > 0 or new > 0:
            kind = ln[:1]
            old -= kind in (" ", "-", "\n")
            new -= kind in (" ", "+", "\n")
    if cur:
        out.append(cur)
    return out


def section_name(lines: Sequence[str]) -> str | None:
    """The file a section is about, for a report (best effort, before parsing)."""
    for prefix in ("+++ ", "--- "):
        for ln in lines:
            if ln.startswith(prefix):
                name = ln[len(prefix):].rstrip("\n").split("\t", 1)[0]
                if name != "/dev/null":
                    return repo_path(name)[0]
            if hunk_counts(ln) is not None:
                break
    m = _GIT_HEADER.match(lines[0]) if lines else None
    return repo_path(m.group(1))[0] if m else None
