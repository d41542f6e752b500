"""`rtcbot`: the one entry point over the three surfaces. `review`, `eval …`, `qualify` and
`config` are the CLI's (bot/cli); `serve`, `worker`, `doctor`, `stats` and `redeliver` the App's (bot/app:
its settings, its store); `action` the Action's (bot/action); each is imported only when it is
called.

Bad input is one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

from bot.shell.gevent_first import patch_for_serve

patch_for_serve()  # before anything else is imported: `rtcbot serve`'s workers start in ms (see there)

import logging  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import click  # noqa: E402

from bot.core import logs  # noqa: E402
from bot.core.settings import LogSettings, SettingsError, load_log_settings  # noqa: E402
from bot.shell.commands import LazyGroup  # noqa: E402
from bot.shell.exits import settings_exit  # noqa: E402

COMMANDS = {
    "review": "bot.cli.review:review",
    "eval": "bot.cli.evaluate:eval_group",
    "qualify": "bot.cli.commands.qualify:command",
    "config": "bot.cli.commands.config:command",
    "stats": "bot.app.commands.stats:command",
    "doctor": "bot.app.commands.doctor:command",
    "serve": "bot.app.commands.serve:command",
    "worker": "bot.app.commands.worker:command",
    "redeliver": "bot.app.commands.redeliver:command",
    "action": "bot.action.command:command",
}
SERVICES = ("serve", "worker")  # long-running: log at info by default
PUBLIC_LOGS = ("action",)  # its log is the workflow's: anyone who reads the repository reads it


def _user_error(e: BaseException) -> bool:
    """An LLM endpoint or sandbox the user must fix (their modules are loaded if they raised)."""
    llm, sandbox = sys.modules.get("analyzers.llm.client"), sys.modules.get("analyzers.sandbox.box")
    return bool((llm and isinstance(e, llm.LLMError)) or (sandbox and isinstance(e, sandbox.SandboxUnavailable)))


def _one_line(e: BaseException, command: str | None) -> str:
    """The error's line: an LLM error names its endpoint (redacted) to the operator on a terminal,
    never in the Action's log (a public repository's workflow logs are public)."""
    for_operator = getattr(e, "for_operator", None)
    return str(for_operator()) if callable(for_operator) and command not in PUBLIC_LOGS else str(e)


class Main(LazyGroup):
    """Turns the errors a user can act on into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.exit(0)
        except click.ClickException as e:  # under json logs, a JSON line like the others
            if not logs.json_lines():
                raise
            logs.say_error(e.format_message())
            sys.exit(e.exit_code)
        except Exception as e:
            if not _user_error(e):
                raise
            logs.say_error(_one_line(e, ctx.invoked_subcommand))
            sys.exit(2)


@click.group(cls=Main, lazy=COMMANDS)
@click.version_option(package_name="rtcbot")
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug; default: LOG_LEVEL).")
@click.pass_context
def main(ctx: click.Context, verbose: int) -> None:
    """rtcbot: label-free trust scores for code changes and review comments."""
    try:
        log_settings = load_log_settings()
    except SettingsError as e:
        if ctx.invoked_subcommand not in SERVICES:
            settings_exit(e)
        log_settings = LogSettings.model_construct()  # said with every other problem by the service
    default = logging.INFO if ctx.invoked_subcommand in SERVICES else logging.WARNING
    logs.configure(log_settings, verbose=verbose, default=default)
