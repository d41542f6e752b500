"""What AutoFix scans: every changed file that holds code in a language its rules cover,
whatever its path, and the text of each.

Semgrep costs nothing, so an ignore glob (the defaults' vendored, generated and built code, the
base branch's config) never takes a file out of its scan: the globs spare only the analyzers that
ask a model (`ChangeSet.scannable`). A file's language is the name's where the name says a code
language, else what its content says (analyzers/code/languages.py): the diff's first lines decide
when it shows them, else the file at the head is read for a file whose name says no language
(a shebang script in `bin/`). A file that holds code and that nothing could scan (over Semgrep's
size limit, a parse failure, not readable) is unanalysed, and a findings gate cannot pass over it,
unless the base branch's config excludes that very path by name (an exact path, not a glob).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from analyzers.autofix.text import pseudo_file
from analyzers.code.diff import ChangeSet, FileChange
from analyzers.code.languages import detect_language
from analyzers.context import AnalysisContext
from analyzers.pipeline import files_at_head
from analyzers.report import AnalyzerReport, Skipped

SCANNED_LANGUAGES = frozenset({"python", "javascript", "typescript", "java"})
EXCUSED = "the base branch's config excludes this path by name"  # how an excused item's reason ends


def in_scope(changes: ChangeSet, ctx: AnalysisContext) -> tuple[list[FileChange], dict[str, str | None]]:
    """(the changed files AutoFix scans, each with its language; the texts at the head already
    read). A file whose language neither its name nor the diff says is read, and its content
    decides; FileChanges are copied, never changed (other analyzers share them)."""
    files = changes.scannable
    unknown = [f.path for f in files if f.language is None]
    read = files_at_head(ctx, unknown) if unknown else {}
    out = []
    for f in files:
        if f.path in read and (lang := detect_language(f.path, read[f.path])) is not None:
            f = dataclasses.replace(f, language=lang)
        out.append(f)
    return out, read


def texts_at_head(files: Sequence[FileChange], ctx: AnalysisContext, report: AnalyzerReport,
                  read: dict[str, str | None]) -> tuple[dict[str, str], list[str]]:
    """Each file's text at the head of the change (`read`: those already read), else its hunks
    pieced together (noted); none of a file too large to read (skipped, as Semgrep skips one over
    its size limit)."""
    texts: dict[str, str] = {}
    from_hunks: list[str] = []
    todo = [fc.path for fc in files if fc.path not in read]
    at_head = {**read, **(files_at_head(ctx, todo) if todo else {})}
    for fc in files:
        text = at_head[fc.path]
        if fc.path in ctx.unread:  # its hunks alone would pass for the file scanned
            report.skipped.append(Skipped(fc.path, ctx.unread[fc.path], path=fc.path))
            continue
        if text is None:
            text = pseudo_file(fc)
            from_hunks.append(fc.path)
        texts[fc.path] = text
    if from_hunks:
        report.notes.append(
            "the files at the head of the change could not be read; scanned "
            f"only the new code of the hunks of: {', '.join(from_hunks)}")
    return texts, from_hunks


def excuse_named(report: AnalyzerReport, changes: ChangeSet) -> None:
    """A file AutoFix could not scan counts against the gate, unless the base branch's config
    names its exact path in `ignore` (a glob that happens to match does not excuse it)."""
    named = {f.path for f in changes.files if f.spared_by_name}
    for i, s in enumerate(report.skipped):
        if s.kind == "failed" and s.path in named:
            report.skipped[i] = dataclasses.replace(s, kind="policy", reason=f"{s.reason}; {EXCUSED}")
