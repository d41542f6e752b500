"""The one result shape every analyzer returns, and its text / JSON / Markdown renderers.

Every publisher (terminal, JSON, Markdown, SARIF, GitHub check runs) reads `AnalyzerReport`;
a new analyzer or a new output format is one new module, never a new shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Level = Literal["notice", "warning", "failure"]
LEVELS: tuple[Level, ...] = ("notice", "warning", "failure")


@dataclass
class Fix:
    """A proposed replacement of lines [start_line, end_line] (1-based, inclusive) of `path`."""

    path: str
    start_line: int
    end_line: int
    replacement: str
    diff: str = ""

    @property
    def suggestion(self) -> str:
        """The fix as a GitHub suggestion block."""
        body = self.replacement if self.replacement.endswith("\n") or not self.replacement else self.replacement + "\n"
        return f"```suggestion\n{body}```"


@dataclass
class Finding:
    """One scored item: a hunk, a review comment, a Semgrep finding, a program.

    `scores` holds the numbers (e.g. {"rtc": 0.33, "lift": 0.33}); `evidence` holds what a
    reviewer needs to trust them (descriptions, regenerated code, matched references).
    """

    analyzer: str
    title: str
    message: str = ""
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    level: Level = "notice"
    scores: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    rule_id: str | None = None
    key: str = ""
    fix: Fix | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        data = dict(data)
        fix = data.pop("fix", None)
        return cls(**data, fix=Fix(**fix) if fix else None)


@dataclass
class Skipped:
    """Something the analyzer did not look at, and why ("no findings" is never silence)."""

    item: str
    reason: str


@dataclass
class AnalyzerReport:
    analyzer: str  # machine name, e.g. "editing_rtc"
    name: str  # display name, e.g. "EditingRTC"
    findings: list[Finding] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)  # aggregate figures
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)  # requests, tokens, cache hits
    error: str | None = None  # set when the analyzer could not run at all

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnalyzerReport:
        data = dict(data)
        findings = [Finding.from_dict(f) for f in data.pop("findings", [])]
        skipped = [Skipped(**s) for s in data.pop("skipped", [])]
        return cls(**data, findings=findings, skipped=skipped)

    def lowest(self, score: str, n: int = 5) -> list[Finding]:
        """The n findings with the lowest value of `score` (those without it last)."""
        scored = [f for f in self.findings if score in f.scores]
        return sorted(scored, key=lambda f: f.scores[score])[:n]


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _location(f: Finding) -> str:
    if not f.path:
        return ""
    if f.start_line is None:
        return f.path
    if f.end_line and f.end_line != f.start_line:
        return f"{f.path}:{f.start_line}-{f.end_line}"
    return f"{f.path}:{f.start_line}"


def score_columns(findings: Iterable[Finding]) -> list[str]:
    """Score names in first-seen order across findings."""
    cols: list[str] = []
    for f in findings:
        for k in f.scores:
            if k not in cols:
                cols.append(k)
    return cols


def render_json(reports: Sequence[AnalyzerReport]) -> str:
    return json.dumps({"reports": [r.to_dict() for r in reports]}, indent=2, ensure_ascii=False)


def render_text(reports: Sequence[AnalyzerReport], width: int = 120) -> str:
    """A readable terminal table per analyzer (rich), with the evidence summarised under it."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    for report in reports:
        console.rule(f"{report.name}")
        if report.error:
            console.print(f"error: {report.error}")
        cols = score_columns(report.findings)
        if report.findings:
            table = Table(show_lines=False)
            table.add_column("location")
            table.add_column("item")
            for c in cols:
                table.add_column(c, justify="right")
            for f in report.findings:
                table.add_row(_location(f), f.title, *(_fmt(f.scores.get(c)) for c in cols))
            console.print(table)
            for f in report.findings:
                if f.message:
                    console.print(f"- {_location(f)}: {f.message}", soft_wrap=False)
        elif not report.error:
            console.print("no findings")
        if report.scores:
            console.print("overall: " + ", ".join(f"{k}={_fmt(v)}" for k, v in report.scores.items()))
        for s in report.skipped:
            console.print(f"skipped {s.item}: {s.reason}")
        for note in report.notes:
            console.print(f"note: {note}")
        if report.usage:
            console.print("usage: " + ", ".join(f"{k}={v}" for k, v in report.usage.items()))
    return buf.getvalue()


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown_report(report: AnalyzerReport, *, max_items: int | None = None) -> str:
    lines = [f"## {report.name}", ""]
    if report.error:
        lines += [f"**Could not run:** {report.error}", ""]
    if report.scores:
        lines += ["| figure | value |", "|---|---|"]
        lines += [f"| {k} | {_fmt(v)} |" for k, v in report.scores.items()]
        lines.append("")
    cols = score_columns(report.findings)
    findings = report.findings if max_items is None else report.findings[:max_items]
    if findings:
        lines.append("| location | item | " + " | ".join(cols) + " |")
        lines.append("|---|---|" + "---|" * len(cols))
        for f in findings:
            cells = [_md_cell(_location(f)), _md_cell(f.title)] + [_fmt(f.scores.get(c)) for c in cols]
            lines.append("| " + " | ".join(cells) + " |")
        if max_items is not None and len(report.findings) > max_items:
            lines.append(f"\n… and {len(report.findings) - max_items} more.")
        lines.append("")
    elif not report.error:
        lines += ["No findings.", ""]
    if report.skipped:
        lines += ["**Skipped**", ""] + [f"- `{s.item}`: {s.reason}" for s in report.skipped] + [""]
    for note in report.notes:
        lines.append(f"> {note}")
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(reports: Sequence[AnalyzerReport]) -> str:
    return "\n".join(render_markdown_report(r) for r in reports)


def render_evidence_markdown(f: Finding, max_chars: int = 4000) -> str:
    """A finding's evidence as Markdown (collapsed code blocks), bounded in size."""
    parts = [f"**{_md_cell(f.title)}** {_location(f)}", ""]
    if f.message:
        parts += [f.message, ""]
    for k, v in f.evidence.items():
        text = v if isinstance(v, str) else json.dumps(v, indent=1, ensure_ascii=False)
        if len(text) > max_chars:
            text = text[:max_chars] + "\n… (cut)"
        parts += [f"<details><summary>{k}</summary>", "", "```", text.replace("```", "ʼʼʼ"), "```", "</details>", ""]
    return "\n".join(parts)
