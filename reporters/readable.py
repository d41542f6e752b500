"""Words people read, for every surface: metric names, values, a headline per analyzer, links
to lines at the head, and evidence as Markdown (never raw JSON). Pure.

Counts print as integers ("12", never "12.000"), percentages as "50%", fractions with two
decimals. Every renderer (check runs, the step summary, `--format markdown`/`text`) takes its
wording from here, so the surfaces say the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from analyzers import registry
from analyzers.report import EMBEDDED_NOTE, AnalyzerReport, Finding
from reporters.untrusted import fenced, inert, plain

# score key → what a reader calls it: each analyzer's own keys as it declares them (`labels`,
# through the registry), then these generic ones; any other key: underscores become spaces
LABELS: dict[str, str] = {"comments": "review comments"}
# scores that count things, shown as integers: these generic ones and those the analyzers
# declare (`count_scores`)
COUNTS = frozenset({"hunks", "findings", "comments"})
_MARKS = re.compile(r"\*\*|__|~~|`+")  # Markdown marks a plain-text title would show raw
ELLIPSIS = "…"
SMALL_MODEL_WARNING = EMBEDDED_NOTE  # the warning of every report the embedded model scored (its `embedded`)


def label(key: str) -> str:
    return registry.labels().get(key) or LABELS.get(key, key.replace("_", " "))


def value(key: str, v: float | int | None) -> str:
    """A score as a reader expects it: counts whole, percentages with %, fractions 0.00."""
    if v is None:
        return "–"
    if key in COUNTS or key.startswith(("n_", "num_")) or key in registry.count_scores():
        return f"{int(round(v)):,}"
    if key.endswith(("_pct", "%")):
        return f"{v:.0f}%"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return f"{v:.2f}"


def figures(scores: Mapping[str, float]) -> str:
    """ "RTC 0.42 · lift over the baseline 0.10 · hunks 12" """
    return " · ".join(f"{label(k)} {value(k, v)}" for k, v in scores.items())


def counted(report: AnalyzerReport) -> str:
    """How many findings, named as what they are: "9 hunks", "1 review comment", "no findings"
    (analyzers/registry.py `noun`)."""
    one, many = registry.noun(report.name)
    n = len(report.findings)
    return f"no {many}" if not n else f"{n:,} {one if n == 1 else many}"


# What every public output (check runs, the step summary, SARIF, `--format text/json/markdown`)
# says of a report's LLM usage: the samples its analyzer read, and their bill — the requests,
# prompt and completion tokens they cost at the endpoint when they were asked
# (analyzers/llm/bill.py), the same figures whether rtcbot's cache answered or not. What was
# actually sent this time (requests, tokens, retries, cache hits, the endpoint's cached prompt
# tokens) differs between a cached answer and a fresh one, or between a warm endpoint and a cold
# one, so it would tell a fork's author whether this installation (or the endpoint) has seen
# the very same request before, from another (private) repository; it stays on /metrics,
# `rtcbot stats` and the dashboard, for its own people. Public name → Usage's.
PUBLIC_USAGE = {"samples": "samples", "requests": "billed_requests", "prompt_tokens": "billed_prompt_tokens",
                "completion_tokens": "billed_completion_tokens"}


def public_usage(usage: Mapping[str, int]) -> dict[str, int]:
    """The figures of `usage` a public output may show (PUBLIC_USAGE), by their public names."""
    return {public: usage[own] for public, own in PUBLIC_USAGE.items() if usage.get(own)}


def llm_work(usage: Mapping[str, int]) -> str:
    """ "LLM work: 15 samples (5 requests, 3,210 prompt and 512 completion tokens)" — the same
    whether the cache answered or not ("" without any sample)."""
    shown = public_usage(usage)
    n = shown.get("samples", 0)
    if not n:
        return ""
    bill = ""
    if shown.get("requests"):
        r = shown["requests"]
        bill = (f" ({r:,} request{'' if r == 1 else 's'}, {shown.get('prompt_tokens', 0):,} prompt and "
                f"{shown.get('completion_tokens', 0):,} completion tokens)")
    return f"LLM work: {n:,} sample{'' if n == 1 else 's'}{bill}"


def headline(report: AnalyzerReport) -> str:
    """One sentence with the analyzer's main figure, in words: "not run: …" where it did not
    run (never a result), its own (analyzers/registry.py `headline`), else how many findings
    and its first score (never "… over no findings")."""
    if report.error:
        return f"could not run: {report.error}"
    if report.not_run:
        return f"not run: {report.not_run}"
    own = registry.headline(report)
    if own is None:
        s = report.scores
        first = next(iter(s), "")
        own = counted(report) if not s or not report.findings else \
            f"{label(first)} {value(first, s[first])} over {counted(report)}"
    return f"{own}; {partial(report)}" if partial(report) else own


def partial(report: AnalyzerReport) -> str:
    """ "3 of 9 hunks scored (LLM budget)" when the analysis scored fewer than it set out to
    ("" when it scored them all, or does not count them)."""
    if not report.planned or not report.cut_by or len(report.findings) >= report.planned:
        return ""
    one, many = registry.noun(report.name)
    return f"{len(report.findings):,} of {report.planned:,} {one if report.planned == 1 else many} " \
           f"scored ({report.cut_by})"


def scored(report: AnalyzerReport) -> str:
    """What the overview's "scored" column says: how many findings ("3 of 9 hunks" when it
    scored fewer than it set out to), or that it did not run."""
    if report.error:
        return "—"
    if report.not_run:
        return "not run"
    if partial(report):
        _, many = registry.noun(report.name)
        return f"{len(report.findings):,} of {report.planned:,} {many}"
    return counted(report)


def title(text: str, limit: int) -> str:
    """`text` as a plain-text title of at most `limit` UTF-8 bytes: one line, Markdown's
    emphasis and code marks dropped (a title shows them raw), mentions defused, cut at a word
    with "…" (never mid-word where a word ends in its second half, never a character put in
    another's place)."""
    words = " ".join(_MARKS.sub("", text).split())
    if len(plain(words).encode("utf-8")) <= limit:
        return plain(words)
    head = words[:limit]
    while head and len(plain(head).encode("utf-8")) + len(ELLIPSIS.encode("utf-8")) > limit:
        head = head[:-1]
    space = head.rfind(" ")
    if space > len(head) // 2:
        head = head[:space]
    return plain(head.rstrip(" ,;:·—-")) + ELLIPSIS


def head_url(repo: str, head_sha: str, path: str, start: int | None = None, end: int | None = None,
             server: str = "") -> str:
    """A link to `path` (lines `start`–`end`) at the head; root-relative without `server`, so
    it works on github.com and on GitHub Enterprise alike."""
    url = f"{server}/{repo}/blob/{head_sha}/{quote(path, safe='/')}"
    if start:
        url += f"#L{start}" + (f"-L{end}" if end and end != start else "")
    return url


def where(f: Finding) -> str:
    if not f.path:
        return ""
    if f.start_line is None:
        return f.path
    if f.end_line and f.end_line != f.start_line:
        return f"{f.path}:{f.start_line}-{f.end_line}"
    return f"{f.path}:{f.start_line}"


def cell(text: str) -> str:
    """Text that is not rtcbot's (or may hold some) for one Markdown line or table cell."""
    return inert(text)


Literal = Callable[[str], str]  # how text that is not rtcbot's is written: inert Markdown, or plain


def _evidence_value(v: Any, max_chars: int, literal: Literal = inert) -> list[str]:
    """One evidence value as Markdown lines (each one line): text as a code block when it
    looks like code, else inert; lists as numbered items, numbers as figures; never a JSON
    dump. Evidence is a model's or a commenter's text: none of it renders as Markdown."""
    def clip(text: str) -> str:
        return text if len(text) <= max_chars else text[:max_chars] + " … (cut)"

    if isinstance(v, bool) or v is None:
        return ["yes" if v else "no"]
    if isinstance(v, int | float):
        return [value("", v)]
    if isinstance(v, str):
        if "\n" in v.strip():
            return fenced(clip(v).rstrip())
        return [literal(clip(v))]
    if isinstance(v, Mapping):
        return _items([(f"- {literal(label(str(k)))}:", _evidence_value(x, max_chars // 4 or 1, literal))
                       for k, x in v.items()])
    if isinstance(v, Sequence):
        items = list(v)
        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in items):
            return [", ".join(value("", x) for x in items) or "none"]
        share = max(1, max_chars // max(1, len(items)))
        return _items([(f"{i}.", _evidence_value(x, share, literal)) for i, x in enumerate(items, 1)]) or ["none"]
    return [literal(clip(str(v)))]


def _items(items: Sequence[tuple[str, list[str]]]) -> list[str]:
    """List items: a marker and its value's lines, on the marker's line when it is one line,
    else every line under it indented as the item's content (so a code block stays inside)."""
    out: list[str] = []
    for marker, sub in items:
        if len(sub) == 1:
            out.append(f"{marker} {sub[0]}")
        else:
            pad = " " * (len(marker.split(" ", 1)[0]) + 1)
            out += [marker, *(f"{pad}{line}" if line else "" for line in sub)]
    return out


def evidence_markdown(f: Finding, max_chars: int = 4000, literal: Literal = inert) -> str:
    """A finding's evidence as readable, collapsed Markdown, bounded in size. `literal`: how
    text that is not rtcbot's is written (`str`: as it is, for a place shown as plain text)."""
    parts: list[str] = []
    for k, v in f.evidence.items():
        parts += [f"<details><summary>{literal(label(str(k)))}</summary>", "",
                  *_evidence_value(v, max_chars, literal), "", "</details>", ""]
    return "\n".join(parts)


def overview(reports: Sequence[AnalyzerReport], conclusions: Mapping[str, str] | None = None,
             links: Mapping[str, str] | None = None) -> list[str]:
    """The table every report opens with: per analyzer its headline, what it scored (hunks,
    review comments, Semgrep findings), conclusion and (where there is one) a link to its
    check run."""
    rows = ["| analysis | in words | scored | conclusion |", "|---|---|---|---|"]
    for r in reports:
        name = f"[{r.title}]({links[r.name]})" if links and r.name in links else r.title
        concl = (conclusions or {}).get(r.name, "error" if r.error else "—")
        rows.append(f"| {name} | {cell(headline(r))} | {scored(r)} | {concl} |")
    return rows


def small_model_ran(reports: Sequence[AnalyzerReport]) -> bool:
    return any(r.embedded for r in reports)
