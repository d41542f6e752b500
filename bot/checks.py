"""AnalyzerReport → check-run output (title, Markdown summary and text), annotations in
batches of at most 50, and the conclusion. Pure: no I/O.

GitHub's limits: `summary` and `text` ≤ 65,535 characters (cut here at a line, closing any
open code block, with a note); ≤ 50 annotations per request (the rest go in further updates);
annotation `title` ≤ 255 characters, `message` and `raw_details` ≤ 64 KB.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analyzers.report import (
    AnalyzerReport,
    Finding,
    render_evidence_markdown,
    render_markdown_report,
)

MAX_OUTPUT_CHARS = 65_535
MAX_ANNOTATIONS_PER_REQUEST = 50
MAX_ANNOTATION_TITLE = 255
MAX_ANNOTATION_TEXT = 60_000  # message / raw_details: 64 KB, kept under in bytes for ASCII-ish text
LOWEST_SHOWN = 5


@dataclass
class CheckOutput:
    title: str
    summary: str
    text: str
    conclusion: str  # neutral | failure | success
    annotations: list[dict[str, Any]] = field(default_factory=list)

    def output(self, annotations: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "summary": self.summary, "text": self.text}
        if annotations:
            out["annotations"] = list(annotations)
        return out

    def batches(self) -> list[list[dict[str, Any]]]:
        return batches(self.annotations)


def cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """`text` within `limit` characters, cut at a line, open blocks closed, with a note."""
    if len(text) <= limit:
        return text
    note = f"\n\n> … cut to fit GitHub's {limit:,}-character limit ({{n:,}} characters left out)."
    budget = limit - len(note) - 40  # room for closing tags and the count
    head = text[:budget]
    nl = head.rfind("\n")
    if nl > budget // 2:
        head = head[:nl]
    closing = ""
    if head.count("```") % 2:
        closing += "\n```"
    opened = head.count("<details>") - head.count("</details>")
    closing += "\n</details>" * max(0, opened)
    out = head + closing + note.format(n=len(text) - len(head))
    return out[:limit]


def batches(items: Sequence[dict[str, Any]], size: int = MAX_ANNOTATIONS_PER_REQUEST) -> list[list[dict[str, Any]]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _fmt(v: float) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def title_of(report: AnalyzerReport) -> str:
    if report.error:
        return f"{report.name}: could not run"
    n = len(report.findings)
    figures = [f"{k} {_fmt(v)}" for k, v in list(report.scores.items())[:3]]
    items = f"{n} finding{'s' if n != 1 else ''}" if n else "no findings"
    return (f"{report.name}: " + ", ".join(figures + [items]))[:MAX_ANNOTATION_TITLE]


def conclusion_of(report: AnalyzerReport, thresholds: Mapping[str, float] | None = None) -> tuple[str, list[str]]:
    """`failure` when an overall score falls below its configured minimum, else `neutral`."""
    crossed = []
    for score, minimum in (thresholds or {}).items():
        value = report.scores.get(score)
        if value is not None and value < minimum:
            crossed.append(f"{score} {_fmt(value)} is below the threshold {_fmt(minimum)}")
    return ("failure" if crossed else "neutral"), crossed


def _primary_score(report: AnalyzerReport) -> str | None:
    for f in report.findings:
        for k in f.scores:
            return k
    return None


def summary_of(report: AnalyzerReport, crossed: Sequence[str] = (), notes: Sequence[str] = ()) -> str:
    lines: list[str] = []
    for n in notes:
        lines += [f"> **Note:** {n}", ""]
    if report.error:
        lines += [f"**{report.name} could not run:** {report.error}", ""]
    for c in crossed:
        lines += [f"**Threshold crossed:** {c}", ""]
    if report.scores:
        lines += ["| figure | value |", "|---|---|"]
        lines += [f"| {k} | {_fmt(v)} |" for k, v in report.scores.items()]
        lines.append("")
    score = _primary_score(report)
    lowest = report.lowest(score, LOWEST_SHOWN) if score else []
    if lowest:
        lines += [f"### Lowest {score}", ""]
        for f in lowest:
            lines += [render_evidence_markdown(f, max_chars=2000), ""]
    elif not report.findings and not report.error:
        lines += ["No findings.", ""]
    if report.skipped:
        lines += ["### Skipped", ""] + [f"- `{s.item}`: {s.reason}" for s in report.skipped] + [""]
    for note in report.notes:
        lines.append(f"> {note}")
    if report.usage:
        lines += ["", "LLM usage: " + ", ".join(f"{k} {v}" for k, v in report.usage.items())]
    return cut("\n".join(lines).strip() + "\n")


def annotation_of(f: Finding) -> dict[str, Any] | None:
    if not f.path or f.start_line is None or f.start_line < 1:
        return None
    end = f.end_line if f.end_line and f.end_line >= f.start_line else f.start_line
    scores = ", ".join(f"{k} {_fmt(v)}" for k, v in f.scores.items())
    message = f.message or f.title
    if scores and scores not in message:
        message = f"{message}\n({scores})"
    if f.fix is not None:
        message += "\n\nProposed fix:\n" + f.fix.suggestion
    ann: dict[str, Any] = {
        "path": f.path,
        "start_line": f.start_line,
        "end_line": end,
        "annotation_level": f.level if f.level in ("notice", "warning", "failure") else "notice",
        "title": (f.title or f.analyzer)[:MAX_ANNOTATION_TITLE],
        "message": message[:MAX_ANNOTATION_TEXT],
    }
    if f.evidence:
        ann["raw_details"] = render_evidence_markdown(f, max_chars=4000)[:MAX_ANNOTATION_TEXT]
    return ann


def render(report: AnalyzerReport, *, thresholds: Mapping[str, float] | None = None,
           notes: Sequence[str] = ()) -> CheckOutput:
    conclusion, crossed = conclusion_of(report, thresholds)
    annotations = [a for a in (annotation_of(f) for f in report.findings) if a is not None]
    return CheckOutput(
        title=title_of(report),
        summary=summary_of(report, crossed, notes),
        text=cut(render_markdown_report(report)),
        conclusion=conclusion,
        annotations=annotations,
    )


def rerun_action() -> dict[str, str]:
    return {"label": "Re-run", "description": "Run this analysis again", "identifier": "rerun"}
