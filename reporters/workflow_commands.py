"""AnalyzerReports → workflow-command annotations (`::warning file=…,line=…::message`): the
Action's output when its token may not write check runs (a fork's pull request).

GitHub shows at most 10 annotations of each level per step and 50 per job: the most severe
go first, and within a level the lowest first score; the rest are counted as left out (the
step summary still lists them). Values are escaped as the runner expects (`%`, CR, LF; and
`:` `,` inside properties), so no text from a pull request can start a command of its own.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

from analyzers.report import AnalyzerReport, Finding
from reporters.base import Collecting, Sinks
from reporters.untrusted import plain

STEP_ANNOTATIONS_PER_LEVEL = 10  # 10 error, 10 warning, 10 notice per step
JOB_ANNOTATIONS = 50
WORKFLOW_LEVEL = {"notice": "notice", "warning": "warning", "failure": "error"}
_SEVERITY = {"failure": 0, "warning": 1, "notice": 2}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _priority(f: Finding) -> tuple[int, float]:
    """Most severe first; within a level, the lowest first score first."""
    first = next(iter(f.scores.values()), 0.0)
    return _SEVERITY.get(f.level, 3), first


def workflow_commands(reports: Sequence[AnalyzerReport]) -> tuple[list[str], int, int]:
    """`::warning file=…,line=…::msg` lines within the per-step limits: (lines, shown, left out)."""
    per_level: dict[str, int] = {}
    lines: list[str] = []
    located = [(r, f) for r in reports for f in r.conclusive if f.path and f.start_line]  # never an inconclusive one
    located.sort(key=lambda rf: _priority(rf[1]))
    for report, f in located:
        level = WORKFLOW_LEVEL.get(f.level, "notice")
        if per_level.get(level, 0) >= STEP_ANNOTATIONS_PER_LEVEL or len(lines) >= JOB_ANNOTATIONS:
            continue
        per_level[level] = per_level.get(level, 0) + 1
        assert f.path is not None and f.start_line is not None
        end = f.end_line if f.end_line and f.end_line >= f.start_line else f.start_line
        props = (f"file={_escape_property(f.path)},line={f.start_line},endLine={end},"
                 f"title={_escape_property(_short(plain(f'{report.title}: {f.title}'), 200))}")
        lines.append(f"::{level} {props}::{_escape_data(_short(plain(f.message or f.title), 4000))}")
    return lines, len(lines), len(located) - len(lines)


class WorkflowCommandsReporter(Collecting):
    """Prints the annotations to the runner's stdout when flushed; (shown, left out)."""

    name = "workflow-commands"

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> WorkflowCommandsReporter:
        return cls(sinks.stream)

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__()
        self.stream = stream

    def flush(self) -> tuple[int, int]:
        lines, shown, left = workflow_commands(self.reports)
        out = self.stream or sys.stdout
        for line in lines:
            print(line, file=out, flush=True)
        return shown, left
