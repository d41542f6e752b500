"""`rtcbot review`: score a patch or a git range on the command line (the other commands are
each one module, named in bot/entry.py `COMMANDS`). Bad input is one clear line on stderr and
a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import click

from analyzers import registry
from analyzers.code.diff import DiffError
from analyzers.context import ReviewComment, Tools, head_file_limit
from analyzers.llm.client import LLMSettings
from bot.cli.llm_options import llm_options, pop_llm_settings
from bot.cli.patch_input import BadInput, read_change
from bot.cli.progress import Progressing
from bot.cli.review_help import analyzers_help, formats_help
from bot.core import review as review_core
from bot.core.config import CONFIG_PATH, ConfigError, LoadedConfig, parse_config, read_file
from bot.core.context import changes_from_diff, comments_from_github, marked_by, select
from bot.core.dismissals import Dismissal
from bot.core.dismissals_file import LoadedDismissals, parse_dismissals
from bot.core.llm import llm_factory
from bot.core.outputs import Printed, Unavailable
from bot.core.qualification import model_name, standing_from_file
from bot.core.review import Ending
from bot.core.settings import SettingsError, load_tools
from bot.github import TokenIdentity
from bot.shell.commands import LazyHelp, options
from bot.shell.exits import settings_exit
from reporters import printable


# -- review -------------------------------------------------------------------------------
def _parse_at(at: str) -> tuple[str, int]:
    path, sep, line = at.rpartition(":")
    if not sep or not path or not line.isdigit() or int(line) < 1:
        raise click.BadParameter(f"expected PATH:LINE, got {at!r}", param_hint="--at")
    return path, int(line)


def load_comments(path: Path, own_login: str | None = None) -> list[ReviewComment]:
    """A JSON list of {path, line, body, author}, or of GitHub's pull-request review comments
    as its API lists them (they carry `side`, `original_line` or `user`): those are read the
    way the App and the Action read them (by side and line; outdated ones placed nowhere).
    rtcbot's own are those by `own_login` (--own-login) with its marker; without it, none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, list):
        raise BadInput(f"{path}: expected a JSON list of comments")
    if data and all(isinstance(c, dict) for c in data) and any(
            k in c for c in data for k in ("side", "original_line", "user", "subject_type")):
        wrote = TokenIdentity(own_login).wrote if own_login else None
        return comments_from_github(data, marked_by(wrote))  # rtcbot's own suggestions are not scored
    out = []
    for i, c in enumerate(data):
        if not isinstance(c, dict) or not isinstance(c.get("body"), str) or not c.get("path"):
            raise BadInput(f"{path}: comment {i} needs at least 'path' and 'body'")
        try:
            line = int(c.get("line") or 0)
        except (TypeError, ValueError):
            raise BadInput(f"{path}: comment {i} has a non-integer 'line'") from None
        out.append(ReviewComment(path=str(c["path"]), line=line, body=c["body"],
                                 author=str(c.get("author") or ""), id=c.get("id", i)))
    return out


def _format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """--format: one of the outputs reporters/ can print (read when the command runs)."""
    known = printable()
    if value not in known:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(known)}")
    return value


_REVIEW_OPTIONS = options(
    click.option("--git", "git_range", metavar="BASE..HEAD", help="Review a range of the git checkout here."),
    click.option("--analyzers", "analyzer_spec", default=None, metavar="LIST", cls=LazyHelp,
                 help_fn=analyzers_help),
    click.option("--format", "fmt", default="text", show_default=True, callback=_format, metavar="FORMAT",
                 cls=LazyHelp, help_fn=formats_help),
    click.option("--comments", "comments_file", type=click.Path(dir_okay=False, path_type=Path),
                 help="Review comments to score: a JSON list of {path, line, body, author}, or GitHub's."),
    click.option("--own-login", metavar="LOGIN", default=None,
                 help="The login rtcbot posted as where --comments (GitHub's) come from, e.g. github-actions[bot]: "
                      "its comments with rtcbot's marker are its own, not scored. Without it, none is."),
    click.option("--comment", "comment_text", help="One review comment to score (with --at)."),
    click.option("--at", "comment_at", metavar="PATH:LINE", help="Where --comment was written."),
    click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
                 help="Checkout at the head of the change (files for AutoFix and the smell detectors)."),
    click.option("--test-command", default=None,
                 help="Runs the repository's tests at --repo: turns SynthesisRTC on (wins over the config's)."),
    click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                 metavar="FILE", help="Repository settings (.github/rtcbot.yml's format: analyzers, fail_on, "
                                         "thresholds, ignore, test_command, options); exit 1 when its gate fails."),
    click.option("--ignore", "ignores", multiple=True, metavar="GLOB", help="Extra ignore globs."),
    click.option("--dismissals", "dismissals_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                 help="The team's dismissals (.github/rtcbot-dismissals.yml's format): what they name is one line "
                      "of the summary, not a finding."),
    click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
                 help="Write the output here too."),
    click.option("--semgrep", "semgrep", metavar="PROGRAM", default=None,
                 help="The Semgrep executable for AutoFix (default: RTCBOT_SEMGREP, else the one installed)."),
    click.option("--rules", "rules", multiple=True, type=click.Path(exists=True, path_type=Path),
                 help="Extra local Semgrep rule file or folder for AutoFix "
                      "(repeatable; default: RTCBOT_SEMGREP_RULES)."),
    click.option("-q", "--quiet", is_flag=True,
                 help="No progress on stderr: live on a terminal, else a line every 30 s (RTCBOT_PROGRESS_S)."),
    click.option("-v", "--verbose", is_flag=True,
                 help="--format text: also how it was measured (the model's figures, notes and samples)."),
)


@click.command("review")
@click.argument("patch", required=False, metavar="PATCH_FILE")
@_REVIEW_OPTIONS
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
    loaded, change = _read(patch, git_range, repo, tools, config_file, ignores,
                           lambda: _comments(comments_file, own_login, comment_text, comment_at))
    explicit = _explicit(analyzer_spec)
    model = partial(_model, llm)
    source = review_core.Read(loaded, change, LoadedDismissals(_load_dismissals(dismissals_file)),
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


def _read(patch: str | None, git_range: str | None, repo: Path | None, tools: Tools, config_file: Path | None,
          ignores: tuple[str, ...], comments: Callable[[], list[ReviewComment]],
          ) -> tuple[LoadedConfig, review_core.Change]:
    """The config (`--config`), the change (the patch, or the git range) without what it ignores,
    then the comments, each read in this order (the first bad one is said)."""
    data, loader = read_change(patch, git_range, repo, head_file_limit(tools), sys.stdin.buffer)
    loaded = _load_config(config_file, tools)
    try:
        changes = changes_from_diff(data, loaded, ignores)
    except DiffError as e:
        raise BadInput(f"{patch or git_range}: {e}") from None
    return loaded, review_core.Change(changes, files=loader, comments=comments(), checkout=repo)


def _comments(comments_file: Path | None, own_login: str | None, text: str | None,
              at: str | None) -> list[ReviewComment]:
    """--comments, and --comment at --at."""
    comments = load_comments(comments_file, own_login) if comments_file else []
    if text and at:
        path, line = _parse_at(at)
        comments.append(ReviewComment(path=path, line=line, body=text, author="cli", id="cli"))
    return comments


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


def _load_config(path: Path | None, tools: Tools) -> LoadedConfig:
    """`--config FILE` (none: the defaults); an invalid file is an error (exit 2) in the words
    the App and the Action use."""
    if path is None:
        return LoadedConfig()
    try:
        loaded = parse_config(read_file(path), tools, name=str(path))
    except ConfigError as e:
        loaded = LoadedConfig(error=str(e))
    if loaded.error is not None:
        click.echo(f"Error: {loaded.error}", err=True)
        sys.exit(2)
    return loaded


def _load_dismissals(path: Path | None) -> tuple[Dismissal, ...]:
    """`--dismissals FILE` (none: no dismissal); an invalid file is an error (exit 2) in the
    words the Action uses."""
    if path is None:
        return ()
    try:
        loaded = parse_dismissals(read_file(path), name=str(path))
    except ConfigError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(2)
    if loaded.error is not None:
        click.echo(f"Error: {loaded.error.removesuffix('; no dismissal applies')}", err=True)
        sys.exit(2)
    return loaded.dismissals


def _allowed_models() -> list[str]:
    return [m.strip() for m in os.environ.get("RTCBOT_ALLOWED_MODELS", "").split(",") if m.strip()]
