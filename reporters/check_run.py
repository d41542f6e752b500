"""AnalyzerReport → GitHub check run: the ONE renderer the App and the Action share, and the
reporter that sends it. The same report gives byte-identical payloads (title, summary, text,
annotations, actions) on both surfaces; tests/reporters/test_parity.py holds them to it.

Rendering is pure: `render` → CheckOutput; `create_body` and `update_bodies` are the request
bodies (name, head SHA, external id, status; then one PATCH per batch of at most 50
annotations, the conclusion and the Re-run button with the last). `CheckRunReporter` sends
them through any client with `create_check_run` / `update_check_run` (bot.github's).

GitHub's limits: `summary` and `text` ≤ 65,535 bytes (cut here at a line, closing any open
code block or <details>, with a note); ≤ 50 annotations per request (the rest go in further
updates); annotation `title` ≤ 255 characters, `message` and `raw_details` ≤ 64 KB; at most 3
actions. Fork pull requests: a check run's `pull_requests` is empty, so the PR number rides in
`external_id` ("<pr>:<analyzer>").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from analyzers.report import AnalyzerReport, Finding
from reporters.base import Target
from reporters.markdown import render_evidence_markdown, render_markdown_report

MAX_OUTPUT_BYTES = 65_535
MAX_OUTPUT_CHARS = MAX_OUTPUT_BYTES  # kept for callers that spoke in characters
MAX_ANNOTATIONS_PER_REQUEST = 50
MAX_ANNOTATION_TITLE = 255
MAX_ANNOTATION_BYTES = 60_000  # message / raw_details: 64 KB, with room to spare
LOWEST_SHOWN = 5
PUBLIC_USAGE = ("requests", "tokens")  # of report.usage; cache hits go to /metrics only
CHECK_PREFIX = "rtcbot / "
RERUN_ACTION = "rerun"


def check_name(title: str) -> str:
    """The check run's name: "rtcbot / <analyzer title>"."""
    return f"{CHECK_PREFIX}{title}"


def external_id(pr_number: int | None, analyzer: str) -> str:
    """What a check run carries so that a re-run knows its PR even when `pull_requests` is
    empty (fork PRs): "<pr number>:<analyzer>"."""
    return f"{pr_number or ''}:{analyzer}"


def rerun_action() -> dict[str, str]:
    return {"label": "Re-run", "description": "Run this analysis again", "identifier": RERUN_ACTION}


# ---------------------------------------------------------------------------- pure rendering
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


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def clip(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-8 bytes (cut at a character, no note)."""
    if _bytes(text) <= limit:
        return text
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def cut(text: str, limit: int = MAX_OUTPUT_BYTES) -> str:
    """`text` within `limit` UTF-8 bytes, cut at a line, open blocks closed, with a note."""
    if _bytes(text) <= limit:
        return text
    note = f"\n\n> … cut to fit GitHub's {limit:,}-byte limit ({{n:,}} characters left out)."
    budget = limit - _bytes(note) - 40  # room for closing tags and the count
    head = clip(text, budget)
    nl = head.rfind("\n")
    if nl > len(head) // 2:
        head = head[:nl]
    closing = ""
    if head.count("```") % 2:
        closing += "\n```"
    opened = head.count("<details>") - head.count("</details>")
    closing += "\n</details>" * max(0, opened)
    return clip(head + closing + note.format(n=len(text) - len(head)), limit)


def batches(items: Sequence[dict[str, Any]],
            size: int = MAX_ANNOTATIONS_PER_REQUEST) -> list[list[dict[str, Any]]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _fmt(v: float) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def title_of(report: AnalyzerReport) -> str:
    if report.error:
        return f"{report.title}: could not run"
    n = len(report.findings)
    figures = [f"{k} {_fmt(v)}" for k, v in list(report.scores.items())[:3]]
    items = f"{n} finding{'s' if n != 1 else ''}" if n else "no findings"
    return (f"{report.title}: " + ", ".join(figures + [items]))[:MAX_ANNOTATION_TITLE]


def conclusion_of(report: AnalyzerReport,
                  thresholds: Mapping[str, float] | None = None) -> tuple[str, list[str]]:
    """`failure` when an overall score falls below its configured minimum, else `neutral`;
    with the reasons (for callers that still hand over per-analyzer minimums)."""
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
        lines += [f"**{report.title} could not run:** {report.error}", ""]
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
    public = {k: v for k, v in report.usage.items() if k in PUBLIC_USAGE}
    if public:  # never cache figures: they would tell one tenant what another's PRs hold
        lines += ["", "LLM usage: " + ", ".join(f"{k} {v}" for k, v in public.items())]
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
        "message": clip(message, MAX_ANNOTATION_BYTES),
    }
    if f.evidence:
        ann["raw_details"] = clip(render_evidence_markdown(f, max_chars=4000), MAX_ANNOTATION_BYTES)
    return ann


def render(report: AnalyzerReport, *, conclusion: str | None = None, crossed: Sequence[str] = (),
           thresholds: Mapping[str, float] | None = None, notes: Sequence[str] = ()) -> CheckOutput:
    """The check run of `report`. The gate decides: `conclusion` and the conditions that hold
    (`crossed`, shown in the summary); without them, `thresholds` (per-score minimums) do."""
    if conclusion is None:
        conclusion, reasons = conclusion_of(report, thresholds)
        crossed = [*crossed, *reasons]
    annotations = [a for a in (annotation_of(f) for f in report.findings) if a is not None]
    return CheckOutput(
        title=title_of(report),
        summary=summary_of(report, crossed, notes),
        text=cut(render_markdown_report(report)),
        conclusion=conclusion,
        annotations=annotations,
    )


def create_body(target: Target, analyzer: str, title: str) -> dict[str, Any]:
    """The POST body that opens an analyzer's check run, in progress."""
    return {"name": check_name(title), "head_sha": target.head_sha,
            "external_id": external_id(target.number, analyzer), "status": "in_progress"}


def update_bodies(out: CheckOutput) -> list[dict[str, Any]]:
    """The PATCH bodies that complete a check run: one per batch of annotations (at least
    one); the last completes it with the conclusion and the Re-run button, so the run only
    shows as done once every annotation is there."""
    parts = out.batches() or [[]]
    bodies: list[dict[str, Any]] = [{"output": out.output(batch)} for batch in parts]
    bodies[-1].update(status="completed", conclusion=out.conclusion, actions=[rerun_action()])
    return bodies


def abandon_body(why: str) -> dict[str, Any]:
    """The PATCH body that completes a check run a run could not finish."""
    return {"status": "completed", "conclusion": "neutral",
            "output": {"title": "rtcbot could not finish", "summary": cut(why)}}


# ---------------------------------------------------------------------------- the reporter
Gate = Callable[[AnalyzerReport], tuple[str, Sequence[str]]]  # report → (conclusion, reasons)


class CheckRunAPI(Protocol):
    """What the reporter needs of a GitHub client (bot.github's has it)."""

    def create_check_run(self, repo: str, name: str, head_sha: str, *, external_id: str,
                         status: str = ...) -> Mapping[str, Any]: ...

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> Any: ...


class CheckRunReporter:
    """One check run per analyzer: opened in progress by `start`, completed by `publish`.

    `runs`: check runs already open (the App's lifecycle finds or reuses them), by analyzer
    name; `start` opens the others. `gate(report)` → (conclusion, conditions that hold);
    `notes(report)` → notes shown at the top of its summary.
    """

    name = "check-runs"

    def __init__(self, client: CheckRunAPI, *, runs: Mapping[str, int] | None = None,
                 gate: Gate | None = None, notes: Sequence[str] = ()) -> None:
        self.client = client
        self.runs: dict[str, int] = dict(runs or {})
        self.gate = gate
        self.notes = list(notes)
        self.target: Target | None = None
        self.sent: dict[str, CheckOutput] = {}

    def start(self, target: Target, analyzers: Mapping[str, str]) -> None:
        """Open a check run, in progress, for each analyzer (name → title) without one."""
        self.target = target
        for name, title in analyzers.items():
            if name in self.runs:
                continue
            body = create_body(target, name, title)
            created = self.client.create_check_run(target.repo, body["name"], body["head_sha"],
                                                   external_id=body["external_id"], status=body["status"])
            self.runs[name] = int(created["id"])

    def publish(self, report: AnalyzerReport) -> CheckOutput | None:
        if self.target is None:
            raise RuntimeError("CheckRunReporter.publish before start")
        run_id = self.runs.get(report.name)
        if run_id is None:
            return None
        conclusion, crossed = self.gate(report) if self.gate is not None else (None, ())
        out = render(report, conclusion=conclusion, crossed=crossed, notes=self.notes)
        for body in update_bodies(out):
            self.client.update_check_run(self.target.repo, run_id, **body)
        self.sent[report.name] = out
        return out

    def flush(self) -> None:
        """Nothing is held back: every report was sent when published."""

    def abandon(self, why: str) -> None:
        """Complete the runs still open when the run cannot finish (best effort)."""
        if self.target is None:
            return
        for name, run_id in self.runs.items():
            if name in self.sent:
                continue
            try:
                self.client.update_check_run(self.target.repo, run_id, **abandon_body(why))
            except Exception:  # best effort: the error that stopped the run is what matters
                continue
