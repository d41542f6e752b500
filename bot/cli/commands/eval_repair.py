"""`rtcbot eval repair DATASET`: program repair (FixEval) judged by running the fixes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from analyzers.execution.oracle import Executor, Limits
from analyzers.execution.passk import histogram, summarize, task_pass_at_k, tca_at_k
from analyzers.execution.repair import (
    RepairConfig,
    RepairTask,
    TaskError,
    TaskResult,
    evaluate,
    sample_fixes,
    task_from_json,
)
from analyzers.llm.client import BudgetExceeded, LLMSettings
from bot.cli.commands._common import bar, parse_ks, plot_option, read_jsonl, save_plot
from bot.cli.commands._datasets import DatasetArgument
from bot.cli.llm_options import llm_options, pop_llm_settings
from bot.core.llm import llm_factory
from bot.shell.commands import options
from reporters.eval_plots import repair_chart


def load_tasks(data: Path, limit: int | None) -> list[RepairTask]:
    tasks: list[RepairTask] = []
    for no, obj in read_jsonl(data):
        try:
            tasks.append(task_from_json(obj, default_id=f"line {no}"))
        except TaskError as e:
            raise click.ClickException(f"{data}:{no}: {e}") from None
        if limit and len(tasks) >= limit:
            break
    if not tasks:
        raise click.ClickException(f"{data}: no tasks")
    return tasks


def figures(results: list[TaskResult], ks: list[int]) -> dict[str, Any]:
    return summarize({f"{i}:{r.task.id}": r.verdicts for i, r in enumerate(results)}, ks)


def task_verdicts(r: TaskResult) -> dict[str, int]:
    """The verdict histogram of one task over every (sample, test case)."""
    return histogram(x for s in r.verdicts for x in s)


def print_table(results: list[TaskResult], ks: list[int], fig: dict[str, Any], title: str) -> None:
    table = Table(title=title)
    table.add_column("task", no_wrap=True)
    table.add_column("samples", justify="right")
    table.add_column("correct", justify="right")
    ks = [k for k in ks if f"pass@{k}" in fig]  # the k the samples can estimate
    tca = ks[:1]
    for k in ks:
        table.add_column(f"pass@{k}", justify="right")
    for k in tca:
        table.add_column(f"TCA@{k}", justify="right")
    table.add_column("verdicts")
    for r in results:
        v = r.verdicts
        hist = task_verdicts(r)
        table.add_row(r.task.id, str(len(v)), str(sum(all(x == "AC" for x in s) for s in v)),
                      *(f"{task_pass_at_k(v, k):.3f}" for k in ks), *(f"{tca_at_k(v, k):.3f}" for k in tca),
                      " ".join(f"{n}:{c}" for n, c in hist.items() if c))
    table.add_section()
    table.add_row("all", "", "", *(f"{fig[f'pass@{k}']:.3f}" for k in ks), *(f"{fig[f'tca@{k}']:.3f}" for k in tca),
                  " ".join(f"{n}:{c}" for n, c in fig["verdicts"].items() if c))
    console = Console()
    if not console.is_terminal:  # piped: wide enough for full task names
        console = Console(width=160)
    console.print(table)
    click.echo("overall: " + (", ".join(f"{key}={fig[key]:.3f}" for key in fig if "@" in key) or "no k estimable"))


def dropped_note(fig: dict[str, Any]) -> str | None:
    """The words for the k left out because a task has fewer samples than k (None: none)."""
    dropped = fig.get("dropped_k") or []
    if not dropped:
        return None
    n = fig["samples"]
    return (f"pass@k and TCA@k not reported for k = {', '.join(map(str, dropped))}: "
            f"{n} sample(s) per task (pass@k is defined only for k <= the samples)")


DEFAULT_KS = (1, 3, 5, 10)


def chosen_ks(k_spec: str | None, samples: int, given_programs: bool) -> list[int]:
    """The k of --k, else those of DEFAULT_KS that do not exceed --samples."""
    try:
        ks = parse_ks(k_spec) if k_spec else [k for k in DEFAULT_KS if k <= samples]
    except click.BadParameter as e:
        raise click.UsageError(f"--k: {e.message}") from None
    if not given_programs and min(ks) > samples:
        raise click.UsageError(f"--k: every k exceeds --samples {samples} (pass@k needs k <= the samples)")
    return ks


def given_programs(data: Path, tasks: list[RepairTask],
                   use_reference: bool) -> tuple[list[tuple[RepairTask, list[str]]], str]:
    """(each task with its reference or buggy program, the table's title)."""
    which = "reference" if use_reference else "buggy"
    pairs = [(t, [t.reference if use_reference else t.buggy]) for t in tasks]
    missing = [t.id for t, ps in pairs if not ps[0].strip()]
    if missing:
        raise click.ClickException(f"{data}: task {missing[0]} has no {which} program")
    return pairs, f"{which} programs of {data.name}"


def model_fixes(data: Path, tasks: list[RepairTask], settings: LLMSettings, cfg: RepairConfig,
                console: Console) -> tuple[list[tuple[RepairTask, list[str]]], str]:
    """(each task with the model's fixes, the table's title); exit 3 when the budget ran out."""
    llm = llm_factory(settings)()
    with bar("asking for fixes", console) as progress:
        task_bar = progress.add_task("tasks", total=len(tasks))

        def ask(t: RepairTask) -> tuple[RepairTask, list[str]]:
            programs = sample_fixes(llm, t, cfg)[1]
            progress.advance(task_bar)
            return t, programs

        try:
            pairs = llm.map(ask, tasks)
        except BudgetExceeded as e:
            stopped = str(e)
        else:
            return pairs, f"{cfg.samples} fix(es) per task from {llm.model} on {data.name}"
    click.echo(f"stopped: {stopped}", err=True)
    sys.exit(3)


def print_notes(results: list[TaskResult], fig: dict[str, Any]) -> None:
    """The runs' notes and the k left out, on stderr."""
    notes = sorted({n for r in results for row in r.results for c in row for n in c.notes})
    for n in notes:
        click.echo(f"note: {n}", err=True)
    if (dropped := dropped_note(fig)) is not None:
        click.echo(f"note: {dropped}", err=True)


repair_options = options(
    click.option("--samples", type=click.IntRange(min=1, max=100), default=10, show_default=True,
                 help="Fixes asked of the model per task."),
    click.option("--k", "k_spec", default=None,
                 help="The k of pass@k and TCA@k.  [default: those of 1,3,5,10 that do not exceed --samples]"),
    click.option("--temperature", type=click.FloatRange(min=0.0, max=2.0, min_open=True), default=0.8,
                 show_default=True, help="Sampling temperature (> 0)."),
    click.option("--use-reference", is_flag=True, help="Run the reference programs (no model)."),
    click.option("--use-buggy", is_flag=True, help="Run the buggy programs (the oracle's own check; no model)."),
    click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N tasks."),
    click.option("--timeout", "wall_s", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
                 help="Wall-clock seconds per test case (CPU time limit too)."),
    click.option("--memory", "memory_mb", type=click.IntRange(min=32), default=2048, show_default=True,
                 help="Memory limit per run in MB."),
    click.option("--workers", type=click.IntRange(min=1, max=256), default=None,
                 help="Parallel runs (default: one per core)."),
    click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON line."),
)


@click.command("repair")
@click.argument("data", type=DatasetArgument("repair"), metavar="DATASET")
@repair_options
@plot_option
@llm_options
def command(data: Path, samples: int, k_spec: str | None, temperature: float, use_reference: bool, use_buggy: bool,
            limit: int | None, wall_s: float, memory_mb: int, workers: int | None, as_json: bool,
            plot: Path | None, **kwargs: Any) -> None:
    """Ask the model to fix each buggy program, run the fixes, print pass@k / TCA@k / verdicts.

    DATASET: a JSON-lines file, or the bundled `quixbugs-dev` (see `rtcbot eval --list`)."""
    if use_reference and use_buggy:
        raise click.UsageError("--use-reference and --use-buggy exclude each other")
    ks = chosen_ks(k_spec, samples, use_reference or use_buggy)
    settings = pop_llm_settings(kwargs)
    tasks = load_tasks(data, limit)
    console = Console(stderr=True)
    if use_reference or use_buggy:
        pairs, title = given_programs(data, tasks, use_reference)
    else:
        pairs, title = model_fixes(data, tasks, settings, RepairConfig(samples=samples, temperature=temperature),
                                   console)
    executor = Executor(Limits(wall_s=wall_s, cpu_s=wall_s, memory_mb=memory_mb), workers=workers)
    with bar("running tests", console) as progress:
        run_bar = progress.add_task("runs", total=sum(len(ps) * len(t.cases) for t, ps in pairs))
        results = evaluate(executor, pairs, on_done=lambda: progress.advance(run_bar))
    fig = figures(results, ks)
    print_notes(results, fig)
    save_plot(plot, lambda: repair_chart([(r.task.id, task_verdicts(r)) for r in results],
                                         {k: fig[f"pass@{k}"] for k in ks if f"pass@{k}" in fig}, title))
    if as_json:
        click.echo(json.dumps(fig))
    else:
        print_table(results, ks, fig, title)
