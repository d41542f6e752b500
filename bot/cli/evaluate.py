"""`rtcbot eval …`: evaluate models on datasets, one command module each in bot/cli/commands."""

from __future__ import annotations

import click

from bot.shell.commands import LazyGroup

EVALS = {
    "editing-rtc": "bot.cli.commands.eval_editing_rtc:command",
    "crscore": "bot.cli.commands.eval_crscore:command",
    "autofix": "bot.cli.commands.eval_autofix:command",
    "repair": "bot.cli.commands.eval_repair:command",
    "review-filter": "bot.cli.commands.eval_review_filter:command",
    "synthesis-rtc": "bot.cli.commands.eval_synthesis_rtc:command",
}


@click.group("eval", cls=LazyGroup, lazy=EVALS, invoke_without_command=True)
@click.option("--list", "list_datasets", is_flag=True, help="List the bundled datasets and exit.")
@click.pass_context
def eval_group(ctx: click.Context, list_datasets: bool) -> None:
    """Evaluate models on datasets (resumable, with a closing table).

    DATASET is a JSON-lines file or a bundled dataset's name (`rtcbot eval --list`)."""
    if list_datasets:
        from bot.cli.commands._datasets import print_list

        print_list()
        ctx.exit(0)
    if ctx.invoked_subcommand is None:  # as `rtcbot` alone: the help, and exit 2
        click.echo(ctx.get_help())
        ctx.exit(2)
