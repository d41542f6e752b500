"""What an analyzer is given besides the ChangeSet: the LLM, the comments, the files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from analyzers.llm import LLMClient

C = TypeVar("C")


@dataclass
class ReviewComment:
    """A review comment on a changed line, written by a person or a bot."""

    path: str
    line: int
    body: str
    author: str = ""
    id: int | str | None = None


@dataclass
class AnalysisContext:
    """Inputs shared by every analyzer in one run.

    `llm` is created on first use (starting the embedded model only when an analyzer needs
    it). `file_at_head(path)` returns the post-change file (from a checkout or GitHub's
    contents API) or None when it is not available.
    """

    llm_factory: Callable[[], LLMClient] | None = None
    comments: list[ReviewComment] = field(default_factory=list)
    repo_path: Path | None = None
    file_loader: Callable[[str], str | None] | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # per analyzer name
    test_command: str | None = None
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
        if self.file_loader is not None:
            return self.file_loader(path)
        if self.repo_path is not None:
            p = (self.repo_path / path).resolve()
            root = self.repo_path.resolve()
            if p.is_relative_to(root) and p.is_file():
                return p.read_text(encoding="utf-8", errors="replace")
        return None

    def opts(self, analyzer: str) -> dict[str, Any]:
        return self.options.get(analyzer, {})

    def config(self, analyzer: str, cls: type[C]) -> C:
        """`cls` (a dataclass of defaults) with the analyzer's options that name its fields."""
        return config_from(cls, self.opts(analyzer))


def config_from(cls: type[C], opts: dict[str, Any]) -> C:
    """A dataclass of settings from an options mapping: the keys it knows; others are left to
    the caller (an analyzer may read extra options of its own)."""
    fields = getattr(cls, "__dataclass_fields__", {})
    return cls(**{k: v for k, v in opts.items() if k in fields})
