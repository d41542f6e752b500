"""What a smell detector finds, and where the tools it runs are: the types every detector
(python.py, pmd.py, jshint.py) returns and the package (`detect_files`, `detect_many`) gathers."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the project root (node_modules/ lives there)
TOOL_TIMEOUT_S = 180


@dataclass(frozen=True)
class Smell:
    tool: str  # "pmd" | "jshint" | "pyscent"
    line: int
    rule: str
    message: str
    col: int | None = None
    text: str = ""  # the sentence, when the detector words it itself

    def sentence(self) -> str:
        if self.text:
            return self.text
        if self.tool == "jshint":
            return f"line {self.line}, col {self.col}, {self.message}"
        return f"line {self.line}, {self.rule}: {self.message}"

    def moved(self, offset: int) -> Smell:
        """The same smell `offset` lines further down (hunk snippet → file numbering)."""
        text = self.text.replace(f"line {self.line}", f"line {self.line + offset}") if self.text else ""
        return Smell(self.tool, self.line + offset, self.rule, self.message, self.col, text)


@dataclass
class SmellReport:
    smells: list[Smell] = field(default_factory=list)
    skipped: str | None = None  # why the detector did not run (or not fully)

    def on_lines(self, lines: Iterable[int]) -> SmellReport:
        keep = set(lines)
        return SmellReport([s for s in self.smells if s.line in keep], self.skipped)


def node_bin(name: str) -> Path | None:
    p = ROOT / "node_modules" / ".bin" / name
    return p if p.exists() else None


def which(cmd: str) -> str | None:
    return shutil.which(cmd)
