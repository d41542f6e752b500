"""Options and helpers shared by the CLI's commands."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

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
