"""AnalyzerReport → GitHub check run: the ONE renderer the App and the Action share, and the
reporter that sends it. The same report gives byte-identical payloads (title, summary, text,
annotations, actions) on both surfaces; tests/reporters/test_parity.py holds them to it.

Rendering is pure: `render` → CheckOutput; `create_body` and `update_bodies` are the request
bodies (name, head SHA, external id, status; then one PATCH per batch of at most 50
annotations, the conclusion and the Re-run button with the last). `CheckRunReporter` sends
them through any client with `create_check_run` / `update_check_run` (bot.github's).

GitHub's limits, counted in UTF-8 bytes (GitHub's docs say "characters"; GitHub answers 422
"summary exceeds a maximum bytesize of 65535"): `summary` and `text` ≤ 65,535 bytes (cut here
at a line, closing any open code block or <details>, with a note of the bytes and lines left
out); annotation `message` and `raw_details` ≤ 64 KB (cut with a note), annotation `title` ≤ 255
(bytes here: the stricter reading); ≤ 50 annotations per request (the rest go in further
updates); at most 3 actions. No cut ever splits a UTF-8 sequence.

Annotations go only where the pull request's diff shows them (the target's `diff`, the one
diff filter, reporters/diff_filter.py): a finding whose lines overlap the RIGHT side of a hunk
is annotated on that overlap; the others, which GitHub would file under "Unchanged files with
check annotations", are listed in the summary with a link to their lines at the head. Without
a diff (`Target.diff` None) every finding is annotated.

Fork pull requests: a check run's `pull_requests` is empty, so the PR number rides in
`external_id` ("<pr>:<analyzer>").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from analyzers import registry
from analyzers.report import GATE_CANNOT_PASS, AnalyzerReport, CannotPass, Finding
from reporters import pr_view, readable, unanalysed, verdict
from reporters.base import Reporter, Sinks, Target, need
from reporters.diff_filter import DiffFilter
from reporters.markdown import dismissed_lines, location, render_evidence_markdown, render_markdown_report
from reporters.untrusted import inert, plain, unclosed
from reporters.verdict import Gate

MAX_OUTPUT_BYTES = 65_535
MAX_ANNOTATIONS_PER_REQUEST = 50
MAX_ANNOTATION_TITLE = 255  # bytes
MAX_ANNOTATION_BYTES = 60_000  # message / raw_details: 64 KB, with room to spare
LOWEST_SHOWN = 5
OUTSIDE_SHOWN = 50  # findings outside the diff listed in the summary; the rest are counted
CHECK_PREFIX = "rtcbot / "
RERUN_ACTION = "rerun"


def check_name(title: str) -> str:
    """The check run's name: "rtcbot / <analyzer title>"."""
    return f"{CHECK_PREFIX}{title}"


def check_name_of(analyzer: str) -> str | None:
    """The check run's name for the analyzer `analyzer` ("rtcbot / EditingRTC"), as every
    surface names it; None when it does not import."""
    try:
        return check_name(registry.get(analyzer).title)
    except Exception:  # an unknown analyzer, or one whose optional dependencies are missing
        return None


def check_titles() -> dict[str, str]:
    """The other way: each check run's title ("EditingRTC") → its analyzer, for every analyzer
    that imports."""
    return {check[len(CHECK_PREFIX):]: name for name in registry.ANALYZERS if (check := check_name_of(name))}


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
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")  # drops only a split last character


def clip_noted(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-8 bytes; when cut, a note says how many bytes were left out."""
    size = _bytes(text)
    if size <= limit:
        return text
    template = "\n… cut to fit GitHub's limit: {n:,} bytes left out."
    head = clip(text, max(0, limit - _bytes(template.format(n=size))))
    return head + template.format(n=size - _bytes(head))  # n ≤ size: the note is no longer


def cut(text: str, limit: int = MAX_OUTPUT_BYTES) -> str:
    """`text` within `limit` UTF-8 bytes, cut at a line, open blocks closed, with a note of
    the bytes and lines left out."""
    size = _bytes(text)
    if size <= limit:
        return text
    template = "\n\n> … cut to fit GitHub's {limit:,}-byte limit: {b:,} bytes ({n:,} lines) left out."
    budget = limit - _bytes(template.format(limit=limit, b=size, n=text.count("\n") + 1))
    while True:
        head = clip(text, max(0, budget))
        nl = head.rfind("\n")
        if nl > len(head) // 2:
            head = head[:nl]
        closing = unclosed(head)
        left = text[len(head):]
        out = head + closing + template.format(limit=limit, b=_bytes(left),
                                               n=len(left.lstrip("\n").splitlines()))
        if _bytes(out) <= limit or budget <= 0:
            return out if _bytes(out) <= limit else clip(out, limit)
        budget -= _bytes(out) - limit  # the closing tags took the room: cut that much more


def batches(items: Sequence[dict[str, Any]],
            size: int = MAX_ANNOTATIONS_PER_REQUEST) -> list[list[dict[str, Any]]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def in_diff(ann: dict[str, Any], diff: DiffFilter) -> dict[str, Any] | None:
    """The annotation on the lines of its finding that the diff shows (cut to the part a hunk
    shows); None when the diff shows none of them."""
    placed = diff.place(ann["path"], ann["start_line"], ann["end_line"])
    if placed is None:
        return None
    return ann if placed == (ann["start_line"], ann["end_line"]) \
        else {**ann, "start_line": placed[0], "end_line": placed[1]}


def line_link(target: Target, path: str, start: int, end: int) -> str:
    """A root-relative link to lines of a file at the head (github.com and GitHub Enterprise
    alike: the check run is shown on the same host)."""
    return readable.head_url(target.repo, target.head_sha, path, start, end)


def outside_lines(findings: Sequence[Finding], target: Target | None) -> list[str]:
    """The summary's section for findings the diff does not show: a short list with links."""
    if not findings:
        return []
    n = len(findings)
    they = "findings are on lines this pull request does not change; they are" if n != 1 \
        else "finding is on lines this pull request does not change; it is"
    lines = ["### Outside the diff", "", f"{n} {they} not annotated:", ""]
    for f in findings[:OUTSIDE_SHOWN]:
        start = f.start_line or 1
        end = f.end_line if f.end_line and f.end_line >= start else start
        where = inert(location(f))
        if target is not None and f.path:
            where = f"[{where}]({line_link(target, f.path, start, end)})"
        scores = readable.figures(f.scores)
        lines.append(f"- {where} {inert(readable.title(f.title or f.analyzer, 200))}"
                     + (f" ({scores})" if scores else ""))
    if n > OUTSIDE_SHOWN:
        lines.append(f"- … and {n - OUTSIDE_SHOWN} more (every finding is in the details below).")
    return [*lines, ""]


def title_of(report: AnalyzerReport, gate: Gate | None = None) -> str:
    """The check run's title: its verdict (reporters/verdict.py: the gate's result, then the
    headline), plain text, cut at a word. GitHub shows it after the check's name ("rtcbot /
    EditingRTC — 7 of 9 changes explained; 2 unclear"), so it does not repeat the analyzer."""
    if report.error and (gate is None or not gate.fails):
        return "could not run"
    return readable.title(verdict.sentence([report], gate).removesuffix("."), MAX_ANNOTATION_TITLE)


def _primary_score(report: AnalyzerReport) -> str | None:
    for f in report.findings:
        for k in f.scores:
            return k
    return None


def summary_of(report: AnalyzerReport, crossed: Sequence[str] = (), notes: Sequence[str] = (),
               outside: Sequence[Finding] = (), target: Target | None = None) -> str:
    """The summary: the verdict, notes, error, thresholds crossed, the headline, what to do,
    findings outside the diff (`outside`, linked at `target`'s head), what the model understood
    of the lowest (folded), what was not analysed, dismissed findings, how it was measured
    (figures, the model's notes, usage: folded)."""
    gate = Gate(fails=any(crossed), reasons=tuple(crossed))
    lines: list[str] = [verdict.markdown([report], gate), ""]
    if report.embedded:
        lines += [f"> **Warning:** {readable.SMALL_MODEL_WARNING}", ""]
    for n in notes:
        lines += [f"> **Note:** {n}", ""]  # the service's own words (config, qualification)
    if report.error:
        lines += [f"**{report.title} could not run:** {inert(report.error)}", ""]
    for c in crossed:
        if isinstance(c, CannotPass):  # names what was not analysed: paths, a tool's words
            lines += [f"**{GATE_CANNOT_PASS.strip()}** {inert(c.why)}", ""]
        else:
            lines += [f"**Threshold crossed:** {c}", ""]  # the gate's words, on the admins' config
    repo, sha = (target.repo, target.head_sha) if target is not None else ("", "")
    lines += pr_view.todo_lines([(f, a) for f, a in pr_view.to_do(report) if f not in outside], repo, sha)
    lines += outside_lines(outside, target)  # before the evidence: a cut never takes it
    score = _primary_score(report)
    lowest = report.lowest(score, LOWEST_SHOWN) if score else []
    if lowest:  # the model's answers: what it understood, never a failure of the change
        lines += pr_view.fold(f"What the model understood of the lowest {readable.label(str(score))}",
                              [render_evidence_markdown(f, max_chars=2000) for f in lowest])
    lines += unanalysed.markdown([report], heading="###")
    if report.dismissed:  # what the team dismissed: one line each, never an annotation
        lines += ["### Dismissed", ""] + dismissed_lines(report) + [""]
    lines += ["", *pr_view.figures_fold(report, LOWEST_SHOWN)]
    return cut("\n".join(lines).strip() + "\n")


def annotation_of(f: Finding) -> dict[str, Any] | None:
    if not f.path or f.start_line is None or f.start_line < 1:
        return None
    end = f.end_line if f.end_line and f.end_line >= f.start_line else f.start_line
    message = plain(f.message or f.title)
    if f.fix is not None:
        message += "\n\nProposed fix:\n" + plain(f.fix.suggestion)
    message += f"\n\nfingerprint {f.fingerprint()}"  # what `ignore` names to dismiss it (docs/github-app.md)
    ann: dict[str, Any] = {
        "path": f.path,
        "start_line": f.start_line,
        "end_line": end,
        "annotation_level": f.level if f.level in ("notice", "warning", "failure") else "notice",
        "title": readable.title(f.title or f.analyzer, MAX_ANNOTATION_TITLE),
        "message": clip_noted(message, MAX_ANNOTATION_BYTES),
    }
    if f.evidence or f.scores:  # the model's figures and answers: behind GitHub's "raw details"
        figures = f"Figures: {readable.figures(f.scores)}\n\n" if f.scores else ""
        ann["raw_details"] = clip_noted(figures + render_evidence_markdown(f, max_chars=4000, markdown=False),
                                        MAX_ANNOTATION_BYTES)  # shown as plain text
    return ann


def render(report: AnalyzerReport, *, conclusion: str | None = None, crossed: Sequence[str] = (),
           notes: Sequence[str] = (), target: Target | None = None) -> CheckOutput:
    """The check run of `report`. The gate decides: `conclusion` and the conditions that hold
    (`crossed`, shown in the summary); without a gate the conclusion is `neutral`.
    `target.diff`: annotate only what the diff shows, list the rest in the summary with links
    to `target`'s head; without one, annotate every finding."""
    diff = target.diff if target is not None else None
    conclusion = conclusion or "neutral"
    annotations: list[dict[str, Any]] = []
    outside: list[Finding] = []
    for f in report.conclusive:  # an inconclusive hunk says nothing about its lines: no annotation
        ann = annotation_of(f)
        if ann is None:
            continue
        placed = ann if diff is None else in_diff(ann, diff)
        if placed is None:
            outside.append(f)
        else:
            annotations.append(placed)
    return CheckOutput(
        title=title_of(report, Gate(fails=conclusion == "failure", reasons=tuple(crossed))),
        summary=summary_of(report, crossed, notes, outside, target),
        text=cut(render_markdown_report(report, repo=target.repo if target else "",
                                        head_sha=target.head_sha if target else "")),
        conclusion=conclusion,
        annotations=annotations,
    )


def create_body(target: Target, analyzer: str, title: str) -> dict[str, Any]:
    """The POST body that opens an analyzer's check run, in progress."""
    return {"name": check_name(title), "head_sha": target.head_sha,
            "external_id": external_id(target.number, analyzer), "status": "in_progress"}


def _same(a: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two annotations the same one (as sent, or as GitHub lists it)."""
    return (a.get("path"), a.get("start_line"), a.get("end_line"), a.get("annotation_level"),
            a.get("title"), a.get("message"))


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
            "output": {"title": "rtcbot could not finish", "summary": cut(inert(why, block=True))}}


# ---------------------------------------------------------------------------- the reporter
Conclude = Callable[[AnalyzerReport], tuple[str, Sequence[str]]]  # report → (conclusion, reasons)


class CheckRunAPI(Protocol):
    """What the reporter needs of a GitHub client (bot.github's has it)."""

    def create_check_run(self, repo: str, name: str, head_sha: str, *, external_id: str,
                         status: str = ...) -> Mapping[str, Any]: ...

    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> Any: ...


class CheckRunReporter(Reporter):
    """One check run per analyzer: opened in progress by `start`, completed by `publish`.

    `runs`: check runs already open (the App's lifecycle finds or reuses them), by analyzer
    name; `start` opens the others. `gate(report)` → (conclusion, conditions that hold);
    `notes` → notes shown at the top of every summary. The target's `diff` says which lines the
    pull request's diff shows, the only ones annotated (none: every finding's).
    """

    name = "check-runs"

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> CheckRunReporter:
        return cls(need(sinks.github, cls.name, "a GitHub client (the App, or the Action's token)"),
                   notes=sinks.notes)

    def __init__(self, client: CheckRunAPI, *, runs: Mapping[str, int] | None = None,
                 gate: Conclude | None = None, notes: Sequence[str] = (),
                 shown: Callable[[int], Sequence[Mapping[str, Any]]] | None = None) -> None:
        self.client = client
        # a run completed before and now done again in place (a re-run): the annotations it
        # already shows, by run id (GitHub appends annotations and never removes them)
        self.shown = shown
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
        out = render(report, conclusion=conclusion, crossed=crossed, notes=self.notes, target=self.target)
        sending = out  # `out`: the report's whole output; `sending`: without what the run shows
        if self.shown is not None:  # post only what the run does not show yet
            there = {_same(a) for a in self.shown(run_id)}
            sending = replace(out, annotations=[a for a in out.annotations if _same(a) not in there])
        for body in update_bodies(sending):
            self.client.update_check_run(self.target.repo, run_id, **body)
        self.sent[report.name] = out
        return out

    def flush(self) -> None:
        """Nothing is held back: every report was sent when published."""
