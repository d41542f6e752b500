"""What `rtcbot qualify` prints: the record as JSON, Markdown or a table, each model's verdict,
and a note on stderr for each model whose budget left sampled hunks unscored."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from analyzers.qualify import ModelResult


def _ci(r: ModelResult) -> str:
    return f"[{r.lift_low:+.3f}, {r.lift_high:+.3f}]"


def _fmt_share(r: ModelResult) -> str:
    return "n/a" if r.format_share is None else f"{r.format_share:.0%}"


def _verdict(r: ModelResult) -> str:
    return "qualified" if r.qualified else "not qualified: " + "; ".join(r.reasons)


COLUMNS = ("model", "hunks", "RTC", "RTC@3", "baseline", "lift", "lift 95% CI", "format", "requests",
           "tokens", "wall s", "cost", "qualified")


def _row(r: ModelResult) -> list[str]:
    return [r.model, str(r.hunks), f"{r.rtc:.3f}", f"{r.rtc_at_3:.3f}", f"{r.baseline:.3f}", f"{r.lift:+.3f}", _ci(r),
            _fmt_share(r), str(r.requests), str(r.tokens), f"{r.wall_s:.1f}",
            "" if r.cost is None else f"{r.cost:.4f}", "yes" if r.qualified else "no"]


def _summary(rec: dict[str, Any]) -> str:
    best = rec["cheapest_qualified"]
    return f"cheapest qualified model: {best}" if best else "no model qualified"


def markdown(rec: dict[str, Any], results: list[ModelResult]) -> str:
    lines = [f"### rtcbot qualify: {rec['repository']} ({rec['revisions']}, "
             f"{results[0].hunks + results[0].not_scored if results else 0} of {rec['hunks_available']} hunks)", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _row(r)) + " |" for r in results]
    lines += [""] + [f"- {r.model}: {_verdict(r)}" for r in results]
    lines += ["", f"**{_summary(rec)}**",
              "", "format: the share of the model's answers in the expected format (a description without code; "
                  "code in a fenced block)."]
    return "\n".join(lines)


def table(rec: dict[str, Any], results: list[ModelResult]) -> Table:
    t = Table(title=f"rtcbot qualify: {rec['repository']} ({rec['revisions']})",
              caption=_summary(rec) + " · format: answers in the expected format")
    for col in COLUMNS:
        t.add_column(col, justify="left" if col == "model" else "right", no_wrap=col != "model")
    for r in results:
        t.add_row(*_row(r))
    return t


def print_results(fmt: str, rec: dict[str, Any], results: list[ModelResult]) -> None:
    """The record as JSON, Markdown or a table with each verdict; notes of budgets spent on stderr."""
    if fmt == "json":
        click.echo(json.dumps(rec, ensure_ascii=False))
    elif fmt == "markdown":
        click.echo(markdown(rec, results))
    else:
        out = Console()
        if not out.is_terminal:  # a pipe or a log: the whole table, not squeezed to 80 columns
            out = Console(width=200)
        out.print(table(rec, results))
        for r in results:
            out.print(f"{r.model}: {_verdict(r)}", markup=False, highlight=False)
    for r in results:
        if r.not_scored:
            click.echo(f"note: {r.model}: {r.not_scored} sampled hunk(s) not scored (budget spent)", err=True)
