"""AnalyzerReports as text (a terminal table), JSON and Markdown; the evidence of a finding as
collapsed Markdown (used by the check-run renderer too). Pure renderers, and the reporters that
print them when flushed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import IO

from analyzers.report import AnalyzerReport, Finding
from reporters.base import Collecting


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def location(f: Finding) -> str:
    """"path", "path:line" or "path:start-end" ("" without a path)."""
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
        console.rule(f"{report.title}")
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
                table.add_row(location(f), f.title, *(_fmt(f.scores.get(c)) for c in cols))
            console.print(table)
            for f in report.findings:
                if f.message:
                    console.print(f"- {location(f)}: {f.message}", soft_wrap=False)
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


def md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown_report(report: AnalyzerReport, *, max_items: int | None = None) -> str:
    lines = [f"## {report.title}", ""]
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
            cells = [md_cell(location(f)), md_cell(f.title)] + [_fmt(f.scores.get(c)) for c in cols]
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
    parts = [f"**{md_cell(f.title)}** {location(f)}", ""]
    if f.message:
        parts += [f.message, ""]
    for k, v in f.evidence.items():
        text = v if isinstance(v, str) else json.dumps(v, indent=1, ensure_ascii=False)
        if len(text) > max_chars:
            text = text[:max_chars] + "\n… (cut)"
        parts += [f"<details><summary>{k}</summary>", "", "```", text.replace("```", "ʼʼʼ"), "```",
                  "</details>", ""]
    return "\n".join(parts)


class _Printing(Collecting):
    """Collects the reports; `flush` prints them, rendered, to the stream."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__()
        self.stream = stream

    def rendered(self) -> str:
        raise NotImplementedError

    def flush(self) -> str:
        text = self.rendered()
        print(text, file=self.stream or sys.stdout, end="" if text.endswith("\n") else "\n")
        return text


class TextReporter(_Printing):
    name = "text"

    def rendered(self) -> str:
        return render_text(self.reports)


class JsonReporter(_Printing):
    name = "json"

    def rendered(self) -> str:
        return render_json(self.reports)


class MarkdownReporter(_Printing):
    name = "markdown"

    def rendered(self) -> str:
        return render_markdown(self.reports)
