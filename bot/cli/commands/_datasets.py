"""The DATASET argument of the `rtcbot eval` commands (a file or a bundled name), and `--list`."""

from __future__ import annotations

from importlib.resources import as_file
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from bot.cli.datasets import BUNDLED, UnknownDataset, lookup, not_found


class DatasetArgument(click.ParamType[Path, object]):
    """A bundled dataset's name (see `rtcbot eval --list`) or the path of a JSON-lines file.

    A bundled name wins over a file of the same name in the working directory; write
    `./NAME` for the file."""

    name = "dataset"

    def __init__(self, command: str) -> None:
        self.command = command

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            return value
        text = str(value)
        if text in BUNDLED:
            try:
                resource = lookup(text, self.command).file()
            except UnknownDataset as e:
                self.fail(str(e), param, ctx)
            if ctx is None:  # pragma: no cover - click always passes the context
                return Path(str(resource))
            return ctx.with_resource(as_file(resource))
        path = Path(text)
        if path.is_dir():
            self.fail(f"{text!r} is a directory, not a JSON-lines file", param, ctx)
        if not path.is_file():
            self.fail(not_found(text), param, ctx)
        return path


def print_list() -> None:
    """`rtcbot eval --list`: every bundled dataset with its size, licence and what it measures."""
    table = Table(title="Bundled datasets (rtcbot eval COMMAND NAME)")
    for col in ("name", "command", "rows", "licence", "measures", "source"):
        table.add_column(col, justify="right" if col == "rows" else "left",
                         no_wrap=col in ("name", "command", "rows", "licence"))
    for ds in BUNDLED.values():
        table.add_row(ds.name, f"eval {ds.command}", f"{ds.rows():,}", ds.licence, ds.measures, ds.origin)
    Console(width=max(Console().width, 120)).print(table)
