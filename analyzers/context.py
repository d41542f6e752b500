"""What an analyzer is given besides the ChangeSet: the LLM, the comments, the files.

A file at the head is the pull request's, of any size (GitHub serves up to 100 MB; a checkout
or a git blob, more). No analysis reads one larger than Semgrep's size limit (1,000,000 bytes,
or RTCBOT_SEMGREP_MAX_TARGET_BYTES where the operator set it higher: `head_file_limit`), the
largest any of its tools takes whole: such a file is not read (its bytes never are: from a
checkout or git, nor from GitHub, whose contents API gives its size first), and
`AnalysisContext.unread` says why, for the analyzer to list it skipped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from analyzers.code.diff import DiffLine, Hunk
from analyzers.llm.client import LLMClient
from analyzers.options import OptionsT, validate
from analyzers.semgrep.scan import MAX_TARGET_BYTES

Side = Literal["LEFT", "RIGHT"]


@dataclass
class ReviewComment:
    """A review comment on a pull request's diff, written by a person or a bot.

    `line` is numbered as GitHub numbers it: on `side` "RIGHT" a line of the head file (an
    added or unchanged line), on "LEFT" a line of the base file (a removed or unchanged line);
    `line` ≤ 0: the whole file. A multi-line comment runs from `start_line` on `start_side` to
    `line` on `side` (GitHub keeps both ends in one hunk). `outdated`: GitHub no longer shows
    the comment on the diff (its lines changed since it was written); it is placed nowhere.
    `ours`: rtcbot wrote it (its own suggestion); set by the surface that knows its identity,
    and never scored (CRScore lists such comments apart)."""

    path: str
    line: int
    body: str
    author: str = ""
    id: int | str | None = None
    side: Side = "RIGHT"
    start_line: int | None = None
    start_side: Side | None = None
    outdated: bool = False
    ours: bool = False

    def lines_in(self, hunk: Hunk) -> list[DiffLine]:
        """The hunk's lines the comment is on, in diff order; [] when its line is not in this
        hunk (or it is outdated, or about the whole file)."""
        at = self._range(hunk)
        return hunk.lines[at[0]:at[1] + 1] if at else []

    def head_span(self, hunk: Hunk) -> tuple[int, int] | None:
        """The head-file lines the comment covers in `hunk` (where an annotation about it goes):
        the head numbers of its lines; a comment on removed lines only sits on the head line
        where they were removed. None when the comment is not on this hunk."""
        at = self._range(hunk)
        if at is None:
            return None
        lo, hi = at
        heads = [ln.new_no for ln in hunk.lines[lo:hi + 1] if ln.new_no is not None]
        if not heads:  # removed lines only: the next head line of the hunk, else the one before
            after = [ln.new_no for ln in hunk.lines[hi + 1:] if ln.new_no is not None]
            before = [ln.new_no for ln in hunk.lines[:lo] if ln.new_no is not None]
            heads = after[:1] or before[-1:] or [hunk.span[0]]
        return min(heads), max(heads)

    def removed_only(self, hunk: Hunk) -> bool:
        """The comment covers removed lines only in `hunk` (no line of the head)."""
        at = self._range(hunk)
        return at is not None and all(ln.new_no is None for ln in hunk.lines[at[0]:at[1] + 1])

    def _range(self, hunk: Hunk) -> tuple[int, int] | None:
        """The first and last index in `hunk.lines` of the lines the comment is on."""
        if self.outdated or self.line <= 0:
            return None
        end = _index(hunk, self.line, self.side)
        if end is None:
            return None
        start = None
        if self.start_line is not None and self.start_line > 0:
            start = _index(hunk, self.start_line, self.start_side or self.side)
        start = end if start is None else start
        return min(start, end), max(start, end)


def _index(hunk: Hunk, line: int, side: Side) -> int | None:
    """Where line `line` of `side` ("LEFT": the base file, "RIGHT": the head) is in the hunk."""
    for i, ln in enumerate(hunk.lines):
        if (ln.old_no if side == "LEFT" else ln.new_no) == line:
            return i
    return None


@dataclass(frozen=True)
class Tools:
    """What only the operator chooses (service settings, CLI flags, workflow inputs), never a
    repository's config: programs, rule files, models, the sandbox mode."""

    semgrep: str | None = None  # the Semgrep executable (None: the one installed beside us)
    extra_rules: tuple[str, ...] = ()  # extra Semgrep rule files, on the operator's disk
    semgrep_max_target_bytes: int | None = None  # Semgrep skips larger files (None: its 1 MB)
    embedding_models: tuple[str, ...] = ()  # models a repository may pick (the default always)
    sandbox: str = "auto"  # auto | bwrap | userns | none (see analyzers/sandbox/box.py)
    semgrep_engine: str = "auto"  # auto (native, else classic) | python (classic only)
    pmd_server: str = "auto"  # auto | on | off: PMD as a long-lived server (analyzers/crscore/smells/pmd.py)


class HeadFileTooLarge(ValueError):
    """A file at the head over `head_file_limit`; str(): why it was not read, in words."""

    def __init__(self, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(f"not read: {size:,} bytes at the head, over the {limit:,}-byte limit "
                         "of a file rtcbot analyses (Semgrep's size limit)")


def head_file_limit(tools: Tools) -> int:
    """The most bytes of a file at the head that an analysis reads (see the module's docstring)."""
    return max(MAX_TARGET_BYTES, tools.semgrep_max_target_bytes or 0)


def capped(text: str | None, limit: int) -> str | None:
    """`text`, or HeadFileTooLarge when its UTF-8 is over `limit` bytes."""
    if text is not None and len(text) * 4 > limit:  # a character is at most 4 bytes
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise HeadFileTooLarge(size, limit)
    return text


def read_capped(path: Path, limit: int) -> str:
    """A file's text, read only up to `limit` bytes: more raises HeadFileTooLarge."""
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
        if len(data) > limit:
            raise HeadFileTooLarge(max(os.fstat(fh.fileno()).st_size, len(data)), limit)
    return data.decode("utf-8", errors="replace")


def read_inside(root: Path, path: str, limit: int) -> str | None:
    """The text of `path` under `root` when it is a file there (symlinks followed, never out of
    `root`), read only up to `limit` bytes (more raises HeadFileTooLarge); else None."""
    base = root.resolve()
    p = (base / path).resolve()
    return read_capped(p, limit) if p.is_relative_to(base) and p.is_file() else None


@dataclass
class AnalysisContext:
    """Inputs shared by every analyzer in one run.

    `llm` is created on first use (starting the embedded model only when an analyzer needs
    it). `file_at_head(path)` returns the post-change file (from a checkout or GitHub's
    contents API) or None when it is not available, or too large to read: then `unread[path]`
    says why (one dict, shared by the copies `dataclasses.replace` makes for each analyzer).
    """

    llm_factory: Callable[[], LLMClient] | None = None
    comments: list[ReviewComment] = field(default_factory=list)
    repo_path: Path | None = None
    file_loader: Callable[[str], str | None] | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # per analyzer: see config()
    test_command: str | None = None
    tools: Tools = field(default_factory=Tools)
    unread: dict[str, str] = field(default_factory=dict)  # files at the head too large to read: why
    # why the model that runs is not qualified for the repository, where a qualification record
    # says so ("" when it is, or no record says): its scores are inconclusive (bot/core/qualification.py)
    unqualified: str = ""
    _llm: LLMClient | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def llm(self) -> LLMClient:
        with self._lock:
            if self._llm is None:
                if self.llm_factory is None:
                    raise RuntimeError("this run has no LLM configured")
                self._llm = self.llm_factory()
            return self._llm

    @property
    def has_llm(self) -> bool:
        return self._llm is not None

    def file_at_head(self, path: str) -> str | None:
        if path in self.unread:
            return None
        limit = head_file_limit(self.tools)
        try:  # a loader may refuse a file as too large (HeadFileTooLarge) before reading it
            if self.file_loader is not None:
                return capped(self.file_loader(path), limit)
            if self.repo_path is not None:
                return read_inside(self.repo_path, path, limit)
        except HeadFileTooLarge as e:
            self.unread[path] = str(e)
        return None

    def config(self, analyzer: str, cls: type[OptionsT]) -> OptionsT:
        """The analyzer's typed options: `cls` validated from this run's options for it (the
        operator's tools are the context for allow-lists). Raises OptionsError."""
        return config_from(cls, self.options.get(analyzer, {}), analyzer, self.tools)


def config_from(cls: type[OptionsT], raw: Any, analyzer: str = "",
                tools: Tools | None = None) -> OptionsT:
    """Typed options from a mapping, validated (unknown keys, types, bounds, operator-only
    keys are errors: OptionsError)."""
    return validate(cls, raw, analyzer or "?", tools if tools is not None else Tools())
