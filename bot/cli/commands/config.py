"""`rtcbot config validate [FILE]`: check a repository's `.github/rtcbot.yml`.

Prints the effective settings (the analyzers that run, and those the App runs; the gate:
`fail_on` with `thresholds` as its sugar; ignore globs, drafts, model, test_command; the
options of those analyzers with the defaults filled in; the App's suggestions, feedback and
require_qualified) as YAML and exits 0, or prints each problem on its own line, with its key
path, and exits 2 (also for a file that cannot be read). The operator's allow-lists
(RTCBOT_EMBEDDING_MODELS) come from the environment, as on the service.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import yaml

from analyzers.registry import DEFAULT_ANALYZERS
from bot.core.config import CONFIG_PATH, ConfigError, effective, parse_config, read_file
from bot.core.settings import SettingsError, load_tools


def _read(path: Path) -> bytes:
    """The file's bytes (one more than the limit at most), or exit 2 with one line."""
    try:
        return read_file(path)
    except ConfigError as e:
        click.echo(str(e), err=True)
        sys.exit(2)


@click.group("config")
def command() -> None:
    """The repository's configuration file (.github/rtcbot.yml)."""


@command.command("validate")
@click.argument("file", default=CONFIG_PATH, type=click.Path(path_type=Path))
def validate(file: Path) -> None:
    """Check FILE (default .github/rtcbot.yml): print the effective settings (exit 0), or
    each problem with its key path (exit 2)."""
    try:
        tools = load_tools()
    except SettingsError as e:
        from bot.shell.exits import settings_exit

        settings_exit(e)
    loaded = parse_config(_read(file), tools, name=str(file))
    if loaded.error is not None:
        for problem in loaded.problems or [loaded.error]:
            click.echo(problem if loaded.named else f"{file}: {problem}", err=True)
        click.echo(f"{file}: invalid ({len(loaded.problems) or 1} problem(s)); the service "
                   "would use the defaults and say so on every check run", err=True)
        sys.exit(2)
    settings = effective(loaded, DEFAULT_ANALYZERS, tools)
    click.echo(f"# {file}: valid. The effective settings:")
    click.echo(yaml.safe_dump(settings, sort_keys=False, default_flow_style=False).rstrip())
