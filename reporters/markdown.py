"""AnalyzerReports as text (a terminal table), JSON and Markdown; the evidence of a finding as
collapsed Markdown (used by the check-run renderer too). Pure renderers, and the reporters that
print them when flushed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from analyzers import registry
from analyzers.report import AnalyzerReport, Finding
from reporters import pr_view, readable, unanalysed, verdict
from reporters.base import Collecting, Sinks
from reporters.untrusted import inert, plain
from reporters.verdict import Gate


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


def render_json(reports: Sequence[AnalyzerReport], gate: Gate | None = None) -> str:
    """The reports as JSON: the verdict first, then each report with its headline in words,
    every finding with its fingerprint (what a dismissal names) and what to do with it, usage
    as public as every output's (readable.public_usage); then what was not analysed, each file
    once."""
    def finding(f: Finding) -> dict[str, object]:
        return {**f.to_dict(), "fingerprint": f.fingerprint(), "advice": registry.advice(f)}

    out = [{**r.to_dict(), "headline": readable.headline(r), "findings": [finding(f) for f in r.findings],
            "usage": readable.public_usage(r.usage)} for r in reports]
    return json.dumps({"verdict": verdict.sentence(reports, gate), "reports": out,
                       "not_analysed": unanalysed.data(reports)}, indent=2, ensure_ascii=False)


def render_text(reports: Sequence[AnalyzerReport], width: int = 120, gate: Gate | None = None,
                verbose: bool = False) -> str:
    """The verdict, then a readable terminal table per analyzer (rich): where, what, what to do
    and the fingerprint; the embedded model's warning once, what was not analysed once. The
    model's figures, notes and LLM work only when `verbose`."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = StringIO()
    # markup off: a model's "[link=…]" or "[bold]" is text, never rich's markup
    console = Console(file=buf, width=width, force_terminal=False, color_system=None, markup=False)
    console.print(verdict.text(reports, gate), soft_wrap=True)
    if readable.small_model_ran(reports):
        console.print(f"warning: {readable.SMALL_MODEL_WARNING}")
    for report in reports:
        console.rule(f"{report.title}")
        console.print(f"error: {report.error}" if report.error else readable.headline(report))
        if report.findings:
            table = Table(show_lines=False)
            table.add_column("location", overflow="fold")
            table.add_column("item", overflow="fold")
            table.add_column("what to do")
            table.add_column("fingerprint", no_wrap=True)
            for f in report.findings:
                todo = registry.advice(f) or (f"inconclusive: {f.inconclusive.words}" if f.inconclusive else "")
                table.add_row(Text(location(f)), Text(f.title), Text(todo), f.fingerprint())
            console.print(table)
            for f in report.findings:
                if f.message:
                    console.print(f"- {location(f)}: {f.message}", soft_wrap=False)
        for d in report.dismissed:
            console.print(f"dismissed: {d}")
        if verbose:
            _internals(console, report)
    for line in unanalysed.text(reports):
        console.print(line, soft_wrap=False)
    if any(r.findings for r in reports):
        console.print(f"To dismiss a finding: `- finding: <its fingerprint>` in {pr_view.DISMISSALS_FILE}, "
                      "with `by:` and `date:`.")
    return buf.getvalue()


def _internals(console: Any, report: AnalyzerReport) -> None:
    """How it was measured (`--verbose`): the figures, the model's notes, the LLM work."""
    if measures := registry.measures(report.name):
        console.print(measures)
    for f in report.findings:
        if f.scores:
            console.print(f"figures {location(f)}: {readable.figures(f.scores)}", soft_wrap=False)
    if report.scores:
        console.print("figures: " + readable.figures(report.scores))
    for note in report.notes:  # the embedded model's is the warning above
        console.print(f"note: {note}")
    if work := readable.llm_work(report.usage):
        console.print(work)


md_cell = readable.cell  # text that may not be rtcbot's, for one line or table cell


def render_markdown_report(report: AnalyzerReport, *, max_items: int | None = None, repo: str = "",
                           head_sha: str = "", skipped: bool = True) -> str:
    """One analyzer as its check run's text: headline, what to do, every finding and how it was
    measured (figures, notes) in folds (links to the lines at the head when `repo` and
    `head_sha` are given), what it did not analyse (unless the caller says it once for every
    analyzer), dismissed findings."""
    lines = pr_view.section(report, repo=repo, head_sha=head_sha, max_items=max_items)
    if skipped:
        lines += unanalysed.markdown([report], heading="###")
    if report.dismissed:
        lines += ["**Dismissed**", ""] + dismissed_lines(report) + [""]
    return "\n".join(lines).rstrip() + "\n"


def render_reports_markdown(reports: Sequence[AnalyzerReport], *, repo: str = "", head_sha: str = "",
                            max_items: int | None = None, conclusions: Mapping[str, str] | None = None,
                            links: Mapping[str, str] | None = None, gate: Gate | None = None,
                            said: bool = False) -> str:
    """Every report behind one overview: the verdict (unless the caller `said` it already), the
    small-model warning when it applies, the overview table, each analyzer, what was not
    analysed (once), and how to dismiss a finding."""
    lines: list[str] = [] if said else [verdict.markdown(reports, gate), ""]
    if readable.small_model_ran(reports):
        lines += [f"> **Warning:** {readable.SMALL_MODEL_WARNING}", ""]
    lines += [*readable.overview(reports, conclusions, links), ""]
    body = [render_markdown_report(r, max_items=max_items, repo=repo, head_sha=head_sha, skipped=False)
            for r in reports]
    tail = [*unanalysed.markdown(reports), *pr_view.dismiss_help(reports)]
    return "\n".join(lines) + "\n" + "\n".join(body) + ("\n" + "\n".join(tail).rstrip() + "\n" if tail else "")


def dismissed_lines(report: AnalyzerReport) -> list[str]:
    """"- line" per finding the team dismissed (its title and the reason are not rtcbot's text)."""
    return [f"- {inert(d)}" for d in report.dismissed]


def render_markdown(reports: Sequence[AnalyzerReport], gate: Gate | None = None) -> str:
    return render_reports_markdown(reports, gate=gate)


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
