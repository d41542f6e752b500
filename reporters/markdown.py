"""AnalyzerReports as text (a terminal table), JSON and Markdown; the evidence of a finding as
collapsed Markdown (used by the check-run renderer too). Pure renderers, and the reporters that
print them when flushed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

from analyzers.report import AnalyzerReport, Finding
from reporters import readable
from reporters.base import Collecting, Sinks
from reporters.untrusted import code, inert, plain


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


location = readable.where  # "path", "path:line" or "path:start-end" ("" without a path)


def score_columns(findings: Iterable[Finding]) -> list[str]:
    """Score names in first-seen order across findings."""
    cols: list[str] = []
    for f in findings:
        for k in f.scores:
            if k not in cols:
                cols.append(k)
    return cols


def render_json(reports: Sequence[AnalyzerReport]) -> str:
    """The reports as JSON, their usage as public as every output's (readable.public_usage)."""
    return json.dumps({"reports": [{**r.to_dict(), "usage": readable.public_usage(r.usage)} for r in reports]},
                      indent=2, ensure_ascii=False)


def render_text(reports: Sequence[AnalyzerReport], width: int = 120) -> str:
    """A readable terminal table per analyzer (rich), with the evidence summarised under it."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = StringIO()
    # markup off: a model's "[link=…]" or "[bold]" is text, never rich's markup
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, markup=False)
    for report in reports:
        console.rule(f"{report.title}")
        console.print(readable.headline(report) if not report.error else f"error: {report.error}")
        cols = score_columns(report.findings)
        if report.findings:
            table = Table(show_lines=False)
            table.add_column("location")
            table.add_column("item")
            for c in cols:
                table.add_column(readable.label(c), justify="right")
            for f in report.findings:
                table.add_row(Text(location(f)), Text(f.title), *(readable.value(c, f.scores.get(c)) for c in cols))
            console.print(table)
            for f in report.findings:
                if f.message:
                    console.print(f"- {location(f)}: {f.message}", soft_wrap=False)
        elif not report.error:
            console.print(readable.counted(report))
        if report.scores:
            console.print("overall: " + readable.figures(report.scores))
        for s in report.skipped:
            console.print(f"skipped {s.item}: {s.reason}")
        for d in report.dismissed:
            console.print(f"dismissed: {d}")
        for note in report.notes:
            console.print(f"note: {note}")
        if work := readable.llm_work(report.usage):
            console.print(work)
    return buf.getvalue()


md_cell = readable.cell  # text that may not be rtcbot's, for one line or table cell


def figures_table(scores: Mapping[str, float]) -> list[str]:
    """The report's figures, named and formatted for a reader (counts whole)."""
    if not scores:
        return []
    return ["| figure | value |", "|---|---|",
            *[f"| {readable.label(k)} | {readable.value(k, v)} |" for k, v in scores.items()], ""]


def render_markdown_report(report: AnalyzerReport, *, max_items: int | None = None, repo: str = "",
                           head_sha: str = "", skipped: bool = True, notes: bool = True) -> str:
    """One analyzer: its headline in words, figures, findings (message, link to the line at
    the head when `repo` and `head_sha` are given), skipped items (unless the caller lists
    them once for every analyzer) and notes."""
    lines = [f"## {report.title}", "", f"**{md_cell(readable.headline(report))}**", ""]
    lines += figures_table(report.scores)
    findings = report.findings if max_items is None else report.findings[:max_items]
    lines += [readable.finding_line(f, repo, head_sha) for f in findings]
    if max_items is not None and len(report.findings) > max_items:
        lines.append(f"- … and {len(report.findings) - max_items:,} more (in the check run)")
    if findings:
        lines.append("")
    elif not report.error:
        lines += [f"{readable.counted(report).capitalize()}.", ""]
    if skipped and report.skipped:
        lines += ["**Skipped**", ""] + skipped_lines(report) + [""]
    if report.dismissed:
        lines += ["**Dismissed**", ""] + dismissed_lines(report) + [""]
    if notes:
        lines += [f"> {inert(n)}" for n in report.notes if n != readable.SMALL_MODEL_WARNING]
    return "\n".join(lines).rstrip() + "\n"


def render_reports_markdown(reports: Sequence[AnalyzerReport], *, repo: str = "", head_sha: str = "",
                            max_items: int | None = None, conclusions: Mapping[str, str] | None = None,
                            links: Mapping[str, str] | None = None) -> str:
    """Every report behind one overview: the small-model warning when it applies, the overview
    table, each analyzer, then the skipped items once."""
    lines: list[str] = []
    if readable.small_model_ran(reports):
        lines += [f"> **Warning:** {readable.SMALL_MODEL_WARNING}", ""]
    lines += [*readable.overview(reports, conclusions, links), ""]
    body = [render_markdown_report(r, max_items=max_items, repo=repo, head_sha=head_sha, skipped=False)
            for r in reports]
    skipped = readable.skipped_once(reports)
    tail = ["## Skipped", "", *skipped, ""] if skipped else []
    return "\n".join(lines) + "\n" + "\n".join(body) + ("\n" + "\n".join(tail) if tail else "")


def dismissed_lines(report: AnalyzerReport) -> list[str]:
    """"- line" per finding the team dismissed (its title and the reason are not rtcbot's text)."""
    return [f"- {inert(d)}" for d in report.dismissed]


def skipped_lines(report: AnalyzerReport) -> list[str]:
    """ "- `path`: reason" per skipped item (a path and a reason are not rtcbot's text)."""
    return [f"- {code(s.item)}: {inert(s.reason)}" for s in report.skipped]


def render_markdown(reports: Sequence[AnalyzerReport]) -> str:
    return render_reports_markdown(reports)


def render_evidence_markdown(f: Finding, max_chars: int = 4000, *, markdown: bool = True) -> str:
    """A finding's evidence as readable Markdown (collapsed; lists as items, code as code,
    never a JSON dump), bounded in size. `markdown=False`: for a place shown as plain text
    (an annotation's raw details), the untrusted text as written, mentions defused."""
    if not markdown:  # the text as written (code blocks included), every mention defused
        head = [f"**{f.title}** {location(f)}", ""] + ([f.message, ""] if f.message else [])
        return plain("\n".join([*head, readable.evidence_markdown(f, max_chars, literal=str)]))
    parts = [f"**{inert(f.title)}** {inert(location(f))}", ""]
    if f.message:
        parts += [inert(f.message, block=True), ""]
    parts.append(readable.evidence_markdown(f, max_chars))
    return "\n".join(parts)


class _Printing(Collecting):
    """Collects the reports; `flush` prints them, rendered, to the stream."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__()
        self.stream = stream

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> _Printing:
        return cls(sinks.stream)

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
