"""Unified diffs → ChangeSet / FileChange / Hunk.

Accepts `git diff`, `git show -p`, `git format-patch` output and GitHub's per-file `patch`
strings (which have no file header). Binary files, files without a patch and ignored files
are kept as skipped, with the reason, so "no findings" is never mistaken for full coverage.
An ignored file (an ignore glob: the defaults' generated, vendored and built code, or the base
branch's config) keeps its hunks and the glob (`spared_by`): the globs spare only the analyzers
that ask a model; the scans that cost nothing read it all the same (`ChangeSet.scannable`).
A file's language comes from its name and, where that is unknown or not code, from the content
the diff shows of its first lines (analyzers/code/languages.py).
The text is first cut into one section per file and checked against its hunk headers
(sections.py); each section is then parsed on its own.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from analyzers.code.languages import CODE_LANGUAGES as CODE_LANGUAGES
from analyzers.code.languages import LANGUAGES as LANGUAGES
from analyzers.code.languages import detect_language
from analyzers.code.languages import language_of as language_of
from analyzers.code.paths import path_problem, printable
from analyzers.code.sections import file_sections, hunk_counts, hunk_problem, repo_path, section_name

Status = Literal["added", "deleted", "modified", "renamed"]

DEFAULT_IGNORES: tuple[str, ...] = (
    # lock files
    "*.lock", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock",
    "poetry.lock", "Pipfile.lock", "Cargo.lock", "go.sum", "composer.lock", "Gemfile.lock",
    # minified bundles and source maps
    "*.min.js", "*.min.css", "*.bundle.js", "*.map",
    # vendored and generated code
    "vendor/*", "*/vendor/*", "third_party/*", "*/third_party/*", "node_modules/*",
    "*/node_modules/*", "dist/*", "build/*", "*_pb2.py", "*_pb2_grpc.py", "*.pb.go",
    "*.generated.*", "*/generated/*", "*.g.dart",
)

class DiffError(ValueError):
    """The input is not a diff we can read (one clear line for the user)."""


SECTION_CHARS = 80  # git keeps 80 bytes of a hunk header's context line; a patch file may hold more


def one_line(text: str, limit: int) -> str:
    """`text` (a pull request's, e.g. a definition's name) as a short label: control and format
    characters (line breaks, terminal escapes, bidirectional overrides) as spaces, runs of spaces
    as one, at most `limit` characters (more cut, ending in "…")."""
    flat = " ".join("".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in text[:limit * 4]).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def is_ignored(path: str, globs: Iterable[str]) -> str | None:
    """The first glob that matches `path` (or its file name), else None."""
    name = path.rsplit("/", 1)[-1]
    for g in globs:
        if fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(name, g):
            return g
    return None


@dataclass(frozen=True)
class DiffLine:
    kind: Literal[" ", "+", "-"]
    text: str
    old_no: int | None
    new_no: int | None


@dataclass
class Hunk:
    path: str
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str = ""
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def old_code(self) -> str:
        """The code before the change: context and removed lines."""
        return "".join(ln.text + "\n" for ln in self.lines if ln.kind != "+")

    @property
    def new_code(self) -> str:
        """The code after the change: context and added lines."""
        return "".join(ln.text + "\n" for ln in self.lines if ln.kind != "-")

    @property
    def added_lines(self) -> list[int]:
        return [ln.new_no for ln in self.lines if ln.kind == "+" and ln.new_no is not None]

    @property
    def removed_lines(self) -> list[int]:
        return [ln.old_no for ln in self.lines if ln.kind == "-" and ln.old_no is not None]

    @property
    def changed_lines(self) -> list[int]:
        """New-side line numbers that the change touches (added lines)."""
        return self.added_lines

    @property
    def removed_code(self) -> str:
        return "".join(ln.text + "\n" for ln in self.lines if ln.kind == "-")

    @property
    def added_code(self) -> str:
        return "".join(ln.text + "\n" for ln in self.lines if ln.kind == "+")

    @property
    def header(self) -> str:
        tail = f" {self.section}" if self.section else ""
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@{tail}"

    @property
    def body(self) -> str:
        """The hunk's diff lines without the @@ header: the same wherever the hunk sits."""
        return "".join(f"{ln.kind}{ln.text}\n" for ln in self.lines)

    @property
    def text(self) -> str:
        """The hunk as it appears in a diff, header included."""
        return self.header + "\n" + self.body

    @property
    def span(self) -> tuple[int, int]:
        """First and last new-side line of the hunk (for annotations)."""
        changed = self.added_lines
        if changed:
            return changed[0], changed[-1]
        start = max(self.new_start, 1)
        return start, max(start, self.new_start + self.new_count - 1)

    @property
    def key(self) -> str:
        """Content identity, independent of line numbers: an unchanged hunk keeps its key."""
        h = hashlib.sha256()
        for part in (self.path, self.old_code, self.new_code):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.hexdigest()[:32]


@dataclass
class FileChange:
    path: str
    old_path: str | None = None
    status: Status = "modified"
    language: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    skipped: str | None = None  # the reason this file is not analysed
    # "failed": it could not be read (too large, malformed, an unsafe name), so no analyzer
    # analysed it and a gate must not pass over it; "policy": left out on purpose
    skip_kind: Literal["policy", "failed"] = "policy"
    # the ignore glob that spares this file from the analyzers that ask a model (its hunks are
    # kept: the scans that cost nothing read it all the same)
    spared_by: str | None = None

    @property
    def spared_by_name(self) -> bool:
        """Excluded by its exact path (not by a glob that happens to match): the base branch's
        config names this very file."""
        return self.spared_by == self.path

    @property
    def changed_lines(self) -> list[int]:
        return [n for h in self.hunks for n in h.changed_lines]


@dataclass
class ChangeSet:
    files: list[FileChange] = field(default_factory=list)

    @property
    def analysed(self) -> list[FileChange]:
        return [f for f in self.files if f.skipped is None]

    @property
    def skipped(self) -> list[FileChange]:
        return [f for f in self.files if f.skipped is not None]

    @property
    def scannable(self) -> list[FileChange]:
        """What the scans that cost nothing read: the analysed files and those an ignore glob
        spares (whatever their path), with their hunks."""
        return [f for f in self.files if f.skipped is None or (f.spared_by is not None and f.hunks)]

    def hunks(self) -> Iterator[tuple[FileChange, Hunk]]:
        for f in self.analysed:
            for h in f.hunks:
                yield f, h

    def file(self, path: str) -> FileChange | None:
        return next((f for f in self.files if f.path == path), None)


def _decode(data: str | bytes) -> str:
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    # CRLF (and lone CR) line endings must not break the parser; the content is unchanged.
    return data.replace("\r\n", "\n").replace("\r", "\n")


_DIFF_START = re.compile(r"^(diff --git |--- |Binary files |GIT binary patch)", re.M)
_FORMAT_PATCH_TRAILER = re.compile(r"^-- \n[^\n]*\n*\Z", re.M)


def _hunks_of(path: str, patched_file: Any) -> list[Hunk]:
    hunks = []
    for uh in patched_file:
        lines = []
        for ln in uh:
            kind = ln.line_type
            if kind not in (" ", "+", "-"):
                continue  # "\ No newline at end of file"
            text = ln.value[:-1] if ln.value.endswith("\n") else ln.value
            lines.append(DiffLine(kind, text, ln.source_line_no, ln.target_line_no))
        hunks.append(
            Hunk(
                path=path,
                old_start=uh.source_start,
                old_count=uh.source_length,
                new_start=uh.target_start,
                new_count=uh.target_length,
                section=one_line(uh.section_header or "", SECTION_CHARS),
                lines=lines,
            )
        )
    return hunks


def _file_change(pf: Any, ignore: Sequence[str], max_file_lines: int) -> FileChange:
    old, old_problem = repo_path(pf.source_file)
    new, new_problem = repo_path(pf.target_file)
    if pf.is_added_file:
        status: Status = "added"
    elif pf.is_removed_file:
        status = "deleted"
    elif old and new and old != new:
        status = "renamed"
    else:
        status = "modified"
    path = new or old or printable(str(pf.path))
    fc = FileChange(path=path, old_path=old if old != path else None, status=status,
                    language=language_of(path))
    problem = new_problem or old_problem
    if problem:
        fc.skipped = f"unsafe file name: {problem}"
        fc.language, fc.skip_kind = None, "failed"
        return fc
    if pf.is_binary_file:
        fc.skipped = "binary file"
    elif status == "deleted":
        fc.skipped = "file deleted"
    else:
        fc.hunks = _hunks_of(path, pf)
        fc.language = detect_language(path, first_lines(fc.hunks))
        n = sum(len(h.lines) for h in fc.hunks)
        if not fc.hunks:
            fc.skipped = "no textual change (mode change or rename only)"
        elif n > max_file_lines:
            fc.skipped = f"too large: {n} diff lines (limit {max_file_lines})"
            fc.hunks = []
            fc.skip_kind = "failed" if fc.language in CODE_LANGUAGES else "policy"
    spare(fc, ignore)
    return fc


def first_lines(hunks: Sequence[Hunk]) -> str | None:
    """The new file's text from its first line on, as far as the first hunk shows it (None when
    the diff does not show line 1): what a language is sniffed from."""
    if not hunks or hunks[0].new_start > 1:
        return None
    return hunks[0].new_code


def spare(fc: FileChange, ignore: Sequence[str]) -> None:
    """An ignore glob that matches the file spares it from the analyzers that ask a model: it
    is "skipped" for them, and keeps its hunks for the scans (a reason already set stays). A
    glob that is the file's exact path (the config's, not a default) is the one kept: the
    config names this file."""
    named = fc.path in ignore and fc.path not in DEFAULT_IGNORES
    glob = fc.path if named else is_ignored(fc.path, ignore)
    if glob:
        fc.spared_by = glob
        if fc.skipped is None:
            fc.skipped = f"ignored by glob {glob!r}"


def _section_changes(lines: Sequence[str], ignore: Sequence[str],
                     max_file_lines: int) -> list[FileChange]:
    """One file's section → its FileChange(s); a section that cannot be read is one skipped
    FileChange with the reason, so one bad file never stops the others."""
    problem = hunk_problem(lines)
    if problem is None:
        try:
            return [_file_change(pf, ignore, max_file_lines) for pf in PatchSet("".join(lines))]
        except Exception as e:  # whatever one file's section does, the others are read
            kind = "" if isinstance(e, UnidiffParseError | ValueError) else f"{type(e).__name__}: "
            problem = f"unreadable diff: {kind}{' '.join(str(e).split())[:200]}"
    name = section_name(lines)
    if name is None and not any(hunk_counts(ln) for ln in lines):
        return []  # no file and no hunk: text around the diff
    return [FileChange(path=name or "(unnamed file)", skipped=problem, skip_kind="failed")]


def parse_diff(
    data: str | bytes,
    *,
    ignore: Sequence[str] = DEFAULT_IGNORES,
    max_file_lines: int = 5000,
) -> ChangeSet:
    """Parse a git diff / show / format-patch into a ChangeSet. Raises DiffError if it is none.
    A file whose name is unsafe or whose section is malformed is kept as skipped, with why."""
    text = _decode(data)
    if not text.strip():
        raise DiffError("the input is empty, not a diff")
    m = _DIFF_START.search(text)
    if not m:
        raise DiffError("the input is not a unified diff (no 'diff --git' or '---/+++' header found)")
    body = _FORMAT_PATCH_TRAILER.sub("", text[m.start():])
    files = [fc for section in file_sections(body.splitlines(keepends=True))
             for fc in _section_changes(section, ignore, max_file_lines)]
    if not files:
        raise DiffError("the input is not a unified diff (no file sections found)")
    return ChangeSet(files)


def parse_github_files(
    files: Iterable[Mapping[str, Any]],
    *,
    ignore: Sequence[str] = DEFAULT_IGNORES,
    max_file_lines: int = 5000,
) -> ChangeSet:
    """Build a ChangeSet from the PR files API (`filename`, `status`, `patch`, ...)."""
    out: list[FileChange] = []
    for f in files:
        path = str(f["filename"])
        gh_status = f.get("status", "modified")
        old = f.get("previous_filename")
        status: Status = {"added": "added", "removed": "deleted", "renamed": "renamed"}.get(
            gh_status, "modified"
        )  # type: ignore[assignment]
        patch = f.get("patch")
        problem = path_problem(path) or (path_problem(str(old)) if old is not None else None)
        if problem:
            out.append(FileChange(path=printable(path), status=status,
                                  skipped=f"unsafe file name: {problem}", skip_kind="failed"))
            continue
        if patch is None or status == "deleted":
            fc = FileChange(path=path, old_path=old, status=status, language=language_of(path))
            fc.skipped = "file deleted" if status == "deleted" else "no patch from GitHub (binary or too large)"
            if status != "deleted" and fc.language in CODE_LANGUAGES:
                fc.skip_kind = "failed"  # a code file: too large for GitHub's patch, not binary
            spare(fc, ignore)
            out.append(fc)
            continue
        src = "/dev/null" if status == "added" else f"a/{old or path}"
        header = f"--- {src}\n+++ b/{path}\n"
        try:
            cs = parse_diff(header + _decode(patch) + ("" if patch.endswith("\n") else "\n"),
                            ignore=ignore, max_file_lines=max_file_lines)
            fc = cs.files[0]
            if len(cs.files) > 1 or fc.path != path:
                fc = FileChange(path=path, old_path=old, status=status, language=language_of(path),
                                skipped="unreadable patch: its lines do not match its header",
                                skip_kind="failed")
        except DiffError as e:
            fc = FileChange(path=path, old_path=old, status=status, language=language_of(path),
                            skipped=f"unreadable patch: {e}", skip_kind="failed")
        if status == "renamed":
            fc.status, fc.old_path = "renamed", old
        out.append(fc)
    return ChangeSet(out)
