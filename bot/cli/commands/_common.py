"""Options and helpers shared by the CLI's commands."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

F = TypeVar("F", bound=Callable[..., Any])


def _check_plot(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """The --plot path, checked before any work: a known extension and a writable folder."""
    if value is None:
        return None
    import os

    from reporters.plots import PlotError, check_path

    try:
        path = check_path(value)
    except PlotError as e:
        raise click.BadParameter(str(e)) from None
    folder = path.parent if str(path.parent) else Path(".")
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise click.BadParameter(f"{path}: cannot write to the folder {folder}")
    return path


def plot_option(fn: F) -> F:
    """--plot FILE (.svg or .png): the evaluation's figure, checked before the run starts."""
    return click.option("--plot", "plot", default=None, metavar="FILE", callback=_check_plot,
                        help="Also write the evaluation's figure to FILE (.svg or .png).")(fn)


def save_plot(plot: Path | None, chart: Callable[[], Any]) -> None:
    """--plot's figure: the chart `chart` builds, written to FILE; nothing without --plot."""
    if plot is None:
        return
    from reporters.plots import save

    save(chart(), plot)


def bar(label: str, console: Console | None = None, **kw: Any) -> Progress:
    """A progress bar on stderr (label, bar, done of total, time left), gone when it ends."""
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=console or Console(stderr=True), transient=True, **kw)


def figure_table(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    """An evaluation's closing table: one figure and its value a row."""
    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    return table


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; a bad line is one clear error."""
    try:
        fh = path.open(encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"cannot read {path}: {e.strerror}") from None
    with fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise click.ClickException(f"{path}:{no}: not JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise click.ClickException(f"{path}:{no}: expected a JSON object per line")
            yield no, obj


def parse_ks(spec: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in spec.split(",") if x.strip()})
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {spec!r}") from None
    if not ks or ks[0] < 1:
        raise click.BadParameter("k values must be positive integers")
    return ks
