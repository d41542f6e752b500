"""How a command ends on settings a person must fix: one line per problem, exit 2."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from bot.core.settings import SettingsError


def settings_exit(e: SettingsError) -> NoReturn:
    """Bad settings: one line per problem, naming its environment variable; exit 2."""
    for line in e.lines or [str(e)]:
        click.echo(f"Error: {line}", err=True)
    sys.exit(2)
