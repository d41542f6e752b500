"""`rtcbot review`: score a patch or a git range on the command line (the other commands are
each one module, named in bot/entry.py `COMMANDS`). Bad input is one clear line on stderr and
a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import click

from analyzers import registry
from analyzers.context import Tools
from analyzers.llm.client import LLMSettings
from bot.cli.llm_options import llm_options, pop_llm_settings
from bot.cli.patch_input import BadInput
from bot.cli.progress import Progressing
from bot.cli.review_help import REVIEW_OPTIONS
from bot.cli.review_source import load_dismissals, read
from bot.core import review as review_core
from bot.core.config import CONFIG_PATH
from bot.core.context import select
from bot.core.llm import llm_factory
from bot.core.outputs import Printed, Unavailable
from bot.core.qualification import model_name, standing_from_file
from bot.core.review import Ending
from bot.core.settings import SettingsError, load_tools
from bot.shell.exits import settings_exit


@click.command("review")
@click.argument("patch", required=False, metavar="PATCH_FILE")
@REVIEW_OPTIONS
@llm_options
def review(patch: str | None, git_range: str | None, analyzer_spec: str | None, fmt: str,
           comments_file: Path | None, own_login: str | None, comment_text: str | None, comment_at: str | None,
           repo: Path | None, test_command: str | None, config_file: Path | None, ignores: tuple[str, ...],
           dismissals_file: Path | None, out_file: Path | None,
           semgrep: str | None, rules: tuple[Path, ...], quiet: bool, verbose: bool,
           **kwargs: Any) -> None:
    """Score a change's hunks and review comments.

    The change is PATCH_FILE (a git diff, git show -p or format-patch; '-' for stdin) or
    --git BASE..HEAD in the checkout here (or at --repo).

    A change is read up to 16 MiB, 3,000 files and 10,000 hunks; a larger one is refused
    before it is parsed (split it).

    Exit status: 0 done; 1 the config's fail_on matched, or cannot pass because an analyzer
    it reads left changed files unanalysed (gates fail closed), or every analyzer failed; 2 bad input
    (a missing or empty file, not a diff, over the limits, a bad option or config);
    3 the LLM budget (--max-requests, --max-tokens) ran out and cut work off (partial result)."""
    llm = pop_llm_settings(kwargs)
    if bool(patch) == bool(git_range):
        raise click.UsageError("give either a PATCH_FILE or --git BASE..HEAD")
    if bool(comment_text) != bool(comment_at):
        raise click.UsageError("--comment and --at go together")
    if repo is not None and not repo.is_dir():
        raise BadInput(f"--repo {repo}: no such directory")
    tools = _tools(semgrep, rules)
    loaded, change = read(patch, git_range, repo, tools, config_file, ignores, comments_file, own_login,
                          comment_text, comment_at)
    explicit = _explicit(analyzer_spec)
    model = partial(_model, llm)
    source = review_core.Read(loaded, change, load_dismissals(dismissals_file),
                              lambda name: standing_from_file(model_name(model(name)), repo))
    defaults = [*registry.PATCH_DEFAULTS, *(registry.comment_readers() if change.comments else [])]
    settings = review_core.Settings(tools, lambda loaded: select(
        loaded, defaults=defaults, explicit=explicit, test_command=test_command, allowed_models=_allowed_models(),
        config_name=str(config_file or CONFIG_PATH)), lambda name: llm_factory(model(name)))
    p = review_core.prepare(source, settings)
    for note in p.notes:
        click.echo(f"note: {note}", err=True)
    shown = Progressing(sum(len(f.hunks) for f in change.changes.files), quiet=quiet)
    try:  # the progress closes before the output prints
        result = review_core.execute(source, [shown, Printed(fmt, click.echo, out_file, verbose=verbose)], settings,
                                     planned=p, on_done=shown.done, on_context=shown.context)
    except Unavailable as e:
        raise click.ClickException(str(e)) from None
    sys.exit(result.end(ENDINGS, lambda line: click.echo(line, err=True), partial_is_status=True))


def _model(llm: LLMSettings, name: str | None) -> LLMSettings:
    """The LLM settings with the config's model, where it names one."""
    return replace(llm, model=name) if name else llm


def _tools(semgrep: str | None, rules: tuple[Path, ...]) -> Tools:
    """The operator's tools (RTCBOT_*), with --semgrep and --rules over them: the person at the
    terminal is the operator."""
    try:
        tools = load_tools()
    except SettingsError as e:
        settings_exit(e)
    return replace(tools, semgrep=semgrep or tools.semgrep, extra_rules=tuple(map(str, rules)) or tools.extra_rules)


def _explicit(analyzer_spec: str | None) -> list[str] | None:
    """--analyzers: an exact list (None: the config's, else the registry's for a patch and,
    with comments, those that read them)."""
    if not analyzer_spec:
        return None
    try:
        return registry.parse_names(analyzer_spec)
    except registry.UnknownAnalyzer as e:
        raise click.BadParameter(str(e), param_hint="--analyzers") from None


# how the command line words the end of a review (bot/core/review.py `Ending`), on stderr
ENDINGS = {Ending.FAILED: "Error: {}", Ending.UNMEASURED: "note: fail_on: not measured in this run: {}",
           Ending.BUDGET: "Error: {} (raise --max-requests/--max-tokens)", Ending.BLOCKED: "Error: {}",
           Ending.MATCHED: "fail_on matched: {}"}


def _allowed_models() -> list[str]:
    return [m.strip() for m in os.environ.get("RTCBOT_ALLOWED_MODELS", "").split(",") if m.strip()]
