"""A click group whose commands are imported only when they are called (or listed by --help):
`rtcbot review` does not pay for the App's web stack, and a command module that fails to
import is reported by name without taking the other commands down."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class LazyGroup(click.Group):
    """`commands` maps each name to "module:attribute", a click.Command imported on first use."""

    def __init__(self, *args: object, lazy: dict[str, str] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.lazy:
            return super().get_command(ctx, cmd_name)
        module, attr = self.lazy[cmd_name].split(":")
        try:
            cmd = getattr(importlib.import_module(module), attr)
        except Exception as e:  # a broken command module must not take the others down
            raise click.ClickException(f"the {cmd_name} command failed to load: {type(e).__name__}: {e}") from e
        if not isinstance(cmd, click.Command):
            raise click.ClickException(f"the {cmd_name} command failed to load: {module}.{attr} is not a command")
        self.add_command(cmd, cmd_name)
        return cmd


def options(*opts: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator for several click options, listed as they would stand above the function."""
    def apply(fn: F) -> F:
        for opt in reversed(opts):
            fn = opt(fn)
        return fn

    return apply


class LazyHelp(click.Option):
    """An option whose help is written when help is shown (`help_fn()`): from a registry read
    then, so that it lists what is registered without importing it as every command starts."""

    def __init__(self, *args: Any, help_fn: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help_fn = help_fn

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.help_fn()
        return super().get_help_record(ctx)
