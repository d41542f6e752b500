"""The Action's run summary: Markdown for GITHUB_STEP_SUMMARY (≤ 1 MiB), and the step's
outputs for GITHUB_OUTPUT (`name=value`, or the heredoc form for multi-line values).

Both need what only the end of a run knows (how the findings were published, what the gate
said), handed over with `conclude(...)` before `flush()`.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from analyzers.report import AnalyzerReport
from reporters import verdict
from reporters.base import Collecting, Sinks, Target, need
from reporters.check_run import cut
from reporters.markdown import render_reports_markdown
from reporters.untrusted import inert
from reporters.verdict import Gate

STEP_SUMMARY_BYTES = 1024 * 1024
MAX_ITEMS = 50  # findings listed per analyzer


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended, for the summary and the outputs."""

    mode: str = "check-runs"  # how the findings were published: check-runs | workflow-commands
    mode_note: str = ""  # one sentence about it, for the summary
    conclusion: str = "neutral"  # the gate's: success | failure | neutral
    gate: str = ""  # the fail-on expression ("" when none)
    matched: tuple[str, ...] = ()  # the alternatives that hold
    missing: tuple[str, ...] = ()  # comparisons the run did not measure
    blocked: tuple[str, ...] = ()  # why the gate cannot pass (bot/core/gate.py: gates fail closed)
    notes: tuple[str, ...] = ()
    sarif_file: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # analyzer → its check run's page
    conclusions: dict[str, str] = field(default_factory=dict)  # analyzer → its check run's conclusion


def gate_of(outcome: RunOutcome) -> Gate:
    """The gate's state as the verdict reads it."""
    reasons = (*outcome.blocked, *outcome.matched)
    return Gate(outcome.gate, bool(outcome.matched or outcome.blocked), reasons)


def step_summary(target: Target, reports: Sequence[AnalyzerReport], outcome: RunOutcome) -> str:
    """The verdict first, then the pull request, the gate in detail, the service's notes and
    every report (reporters/markdown.py)."""
    where = f"{target.repo}#{target.number}" if target.number is not None else target.repo
    lines = [verdict.markdown(reports, gate_of(outcome)), "", f"# rtcbot: {where}", ""]
    if target.title:
        lines += [f"**{inert(target.title)}** · head `{target.head_sha[:12]}`", ""]
    if outcome.mode_note:
        lines += [outcome.mode_note, ""]
    if outcome.gate:
        said = ("**failed**: " + "; ".join(f"`{m}`" for m in outcome.matched)) if outcome.matched \
            else "**failed**" if outcome.blocked else "passed"
        lines += [f"fail-on `{outcome.gate}`: {said}", ""]
        lines += [f"**{why.partition(': ')[0]}:** {inert(why.partition(': ')[2])}" for why in outcome.blocked]
        lines += [""] if outcome.blocked else []
        if outcome.missing:
            lines += ["Not measured in this run (those comparisons count as false): "
                      + ", ".join(f"`{m}`" for m in outcome.missing), ""]
    lines += [f"> {n}" for n in outcome.notes] + ([""] if outcome.notes else [])  # the service's own words
    body = render_reports_markdown(reports, repo=target.repo, head_sha=target.head_sha, max_items=MAX_ITEMS,
                                   conclusions=outcome.conclusions, links=outcome.links, said=True)
    return cut("\n".join(lines) + "\n" + body, STEP_SUMMARY_BYTES)


def output_values(reports: Sequence[AnalyzerReport], outcome: RunOutcome) -> dict[str, str]:
    out = {
        "conclusion": outcome.conclusion,
        "findings": str(sum(len(r.findings) for r in reports)),
        "annotations": outcome.mode,
        "scores": json.dumps({r.name: r.scores for r in reports}, sort_keys=True),
        "sarif-file": outcome.sarif_file,
    }
    for r in reports:
        slug = r.name.replace("_", "-")
        out[f"{slug}-findings"] = str(len(r.findings))
        for k, v in r.scores.items():
            out[f"{slug}-{re.sub(r'[^A-Za-z0-9]+', '-', k).strip('-')}"] = f"{v:.6g}"
    out.update(outcome.extra)
    return out


def write_outputs(path: Path, values: Mapping[str, str]) -> None:
    """Append `name=value` (or the heredoc form for multi-line values) to GITHUB_OUTPUT."""
    with path.open("a", encoding="utf-8") as fh:
        for k, v in values.items():
            if "\n" in v:
                delim = f"rtcbot_{uuid.uuid4().hex}"
                fh.write(f"{k}<<{delim}\n{v}\n{delim}\n")
            else:
                fh.write(f"{k}={v}\n")


class _AtTheEnd(Collecting):
    def __init__(self) -> None:
        super().__init__()
        self.outcome = RunOutcome()

    def conclude(self, outcome: RunOutcome) -> None:
        self.outcome = outcome


class StepSummaryReporter(_AtTheEnd):
    """Appends the summary to `path` (GITHUB_STEP_SUMMARY), or prints it without one."""

    name = "step-summary"

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> StepSummaryReporter:
        return cls(sinks.step_summary, sinks.stream)

    def __init__(self, path: Path | None = None, stream: IO[str] | None = None) -> None:
        super().__init__()
        self.path, self.stream = path, stream

    def flush(self) -> str:
        text = step_summary(self.target, self.reports, self.outcome)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        else:
            print(text, file=self.stream or sys.stdout)
        return text


class OutputsReporter(_AtTheEnd):
    """Appends the step's outputs to `path` (GITHUB_OUTPUT)."""

    name = "outputs"

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> OutputsReporter:
        return cls(need(sinks.outputs, cls.name, "a file for the step's outputs (GITHUB_OUTPUT)"))

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def flush(self) -> dict[str, str]:
        values = output_values(self.reports, self.outcome)
        write_outputs(self.path, values)
        return values
