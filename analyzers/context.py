"""What an analyzer is given besides the ChangeSet: the LLM, the comments, the files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzers.llm import LLMClient
from analyzers.options import OptionsT, validate


@dataclass
class ReviewComment:
    """A review comment on a changed line, written by a person or a bot."""

    path: str
    line: int
    body: str
    author: str = ""
    id: int | str | None = None


@dataclass(frozen=True)
class Tools:
    """What only the operator chooses (service settings, CLI flags, workflow inputs), never a
    repository's config: programs, rule files, models, the sandbox mode."""

    semgrep: str | None = None  # the Semgrep executable (None: the one installed beside us)
    extra_rules: tuple[str, ...] = ()  # extra Semgrep rule files, on the operator's disk
    embedding_models: tuple[str, ...] = ()  # models a repository may pick (the default always)
    sandbox: str = "auto"  # auto | bwrap | userns | none (see analyzers/sandbox.py)


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
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # per analyzer: see config()
    test_command: str | None = None
    tools: Tools = field(default_factory=Tools)
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

    def config(self, analyzer: str, cls: type[OptionsT]) -> OptionsT:
        """The analyzer's typed options: `cls` validated from this run's options for it (the
        operator's tools are the context for allow-lists). Raises OptionsError."""
        return config_from(cls, self.options.get(analyzer, {}), analyzer, self.tools)


def config_from(cls: type[OptionsT], raw: Any, analyzer: str = "",
                tools: Tools | None = None) -> OptionsT:
    """Typed options from a mapping, validated (unknown keys, types, bounds, operator-only
    keys are errors: OptionsError)."""
    return validate(cls, raw, analyzer or "?", tools if tools is not None else Tools())
