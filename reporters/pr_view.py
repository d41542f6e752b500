"""One analyzer's part of a report as a pull request's author reads it: the headline, then what
to do (each finding its analyzer gives advice on: the hunk no description re-created, the
review comment that rates low and why, the fix to commit), then every finding in a closed fold
with its fingerprint, then the figures researchers read (RTC@k, normalised, chrF, baseline,
leaks) in another fold. Pure; every Markdown output (check runs, the step summary, `--format
markdown`) takes its sections from here.

Every finding carries its fingerprint (`Finding.fingerprint()`, the value a dismissal names)
as the line a team copies into `.github/rtcbot-dismissals.yml` (bot/core/dismissals_file.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzers import registry
from analyzers.report import AnalyzerReport, Finding
from reporters import readable
from reporters.untrusted import code, inert

DISMISSALS_FILE = ".github/rtcbot-dismissals.yml"  # bot/core/dismissals_file.py DISMISSALS_PATH
TODO_SHOWN = 10  # findings to act on listed in a check run's summary (every one in its text)


def to_do(report: AnalyzerReport) -> list[tuple[Finding, str]]:
    """The findings its analyzer says the author should act on, each with what to do."""
    return [(f, a) for f in report.findings if (a := registry.advice(f))]


def dismissal(f: Finding) -> str:
    """The entry's first line in the dismissals file: "finding: 3f2a9c0d1e4b5a67"."""
    return f"finding: {f.fingerprint()}"


def _where(f: Finding, repo: str, head_sha: str) -> str:
    loc = code(readable.where(f))
    if loc and repo and head_sha and f.path:
        loc = f"[{loc}]({readable.head_url(repo, head_sha, f.path, f.start_line, f.end_line)})"
    return loc


def todo_line(f: Finding, advice: str, repo: str = "", head_sha: str = "") -> str:
    """ "- [`a.py:3-5`](link) **title** — what to do · `finding: 3f2a…`" """
    return f"- {_where(f, repo, head_sha)} **{readable.cell(f.title)}** — {inert(advice)} · {code(dismissal(f))}" \
        .replace("-  ", "- ")


def finding_line(f: Finding, repo: str = "", head_sha: str = "") -> str:
    """ "- [`a.py:3-5`](link) **title** — message · `finding: 3f2a…`" (no figures: see figures_fold)"""
    text = f"**{readable.cell(f.title)}**"
    if f.inconclusive is not None:
        text += f" — inconclusive: {f.inconclusive.words}."
    if f.message and f.message != f.title:
        text += f" — {readable.cell(f.message)}"
    return f"- {_where(f, repo, head_sha)} {text} · {code(dismissal(f))}".replace("-  ", "- ")


def fold(summary: str, body: Sequence[str]) -> list[str]:
    """A closed <details> fold (none when `body` is empty)."""
    if not body:
        return []
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>", ""]


INTERNALS = "How it was measured (the model's figures and notes)"


def figures_fold(report: AnalyzerReport, max_items: int | None = None) -> list[str]:
    """What the author need not read, in a closed fold: what the figures measure and what a
    good value is, the report's figures, each finding's, the model's notes (answers out of
    format, thresholds) and the LLM work (samples)."""
    body = [f"- overall: {readable.figures(report.scores)}"] if report.scores else []
    findings = [f for f in report.findings if f.scores][:max_items]
    body += [f"- {code(readable.where(f)) or inert(readable.title(f.title, 80))}: {readable.figures(f.scores)}"
             for f in findings]
    body += [f"- note: {inert(n)}" for n in report.notes]  # the embedded model's: a warning
    work = readable.llm_work(report.usage)  # samples only: never a cache oracle (readable.PUBLIC_USAGE)
    body += [f"- {work}"] if work else []
    measures = registry.measures(report.name) if report.findings else None
    return fold(INTERNALS, [measures, "", *body] if measures and body else body)


def findings_fold(report: AnalyzerReport, repo: str = "", head_sha: str = "",
                  max_items: int | None = None) -> list[str]:
    """Every finding (at most `max_items`), message and fingerprint, in a closed fold."""
    shown = report.findings if max_items is None else report.findings[:max_items]
    lines = [finding_line(f, repo, head_sha) for f in shown]
    if len(report.findings) > len(shown):
        lines.append(f"- … and {len(report.findings) - len(shown):,} more (in the check run)")
    one, many = registry.noun(report.name)
    n = len(report.findings)
    title = f"The {one}, with its fingerprint" if n == 1 else f"All {n:,} {many}, with their fingerprints"
    return fold(title, lines)


def todo_lines(todo: Sequence[tuple[Finding, str]], repo: str = "", head_sha: str = "",
               limit: int | None = TODO_SHOWN) -> list[str]:
    """ "What to do:" and a line per finding to act on, at most `limit` (the rest counted)."""
    if not todo:
        return []
    shown = todo if limit is None else todo[:limit]
    more = [f"- … and {len(todo) - len(shown):,} more (in the list below)"] if len(todo) > len(shown) else []
    return ["What to do:", "", *(todo_line(f, a, repo, head_sha) for f, a in shown), *more, ""]


def section(report: AnalyzerReport, *, repo: str = "", head_sha: str = "", max_items: int | None = None,
            heading: str = "##") -> list[str]:
    """One analyzer: its headline, what to do, every finding and the figures (folded)."""
    lines = [f"{heading} {report.title}", "", f"**{readable.cell(readable.headline(report))}**", ""]
    todo = to_do(report)
    lines += todo_lines(todo, repo, head_sha, max_items)
    if report.findings and not todo:
        lines += ["Nothing to do here." if report.conclusive else
                  "Nothing to do here: the evidence says nothing about the change.", ""]
    lines += findings_fold(report, repo, head_sha, max_items)
    lines += figures_fold(report, max_items)
    return lines


def dismiss_help(reports: Sequence[AnalyzerReport]) -> list[str]:
    """Once per report: how to dismiss a finding, with the first finding's entry to copy."""
    first = next((f for r in reports for f in r.findings), None)
    if first is None:
        return []
    return [f"To dismiss a finding, copy its `finding:` line into `{DISMISSALS_FILE}` on the default branch:",
            "", "```yaml", "dismissals:", f"  - {dismissal(first)}", "    by: your-github-login",
            "    date: YYYY-MM-DD", "    reason: why it does not apply", "```", ""]
