"""What `rtcbot review` reads, all of it before any work, in this order (the first bad one is
said): the change (a patch file, stdin or `git diff BASE..HEAD`: bot/cli/patch_input.py), the
config (`--config`), the change without what the config and `--ignore` leave out, the review
comments (`--comments`, `--comment` at `--at`); then the team's dismissals (`--dismissals`).
Bad input is one line on stderr and exit 2, in the words the App and the Action use."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from analyzers.code.diff import DiffError
from analyzers.context import ReviewComment, Tools, head_file_limit
from bot.cli.patch_input import BadInput, read_change
from bot.core import review as review_core
from bot.core.config import ConfigError, LoadedConfig, parse_config, read_file
from bot.core.context import changes_from_diff, comments_from_github, marked_by
from bot.core.dismissals_file import LoadedDismissals, parse_dismissals
from bot.github import TokenIdentity


def read(patch: str | None, git_range: str | None, repo: Path | None, tools: Tools, config_file: Path | None,
         ignores: tuple[str, ...], comments_file: Path | None, own_login: str | None, comment_text: str | None,
         comment_at: str | None) -> tuple[LoadedConfig, review_core.Change]:
    """The config (`--config`), the change (the patch, or the git range) without what it ignores,
    then the comments, each read in this order (the first bad one is said)."""
    data, loader = read_change(patch, git_range, repo, head_file_limit(tools), sys.stdin.buffer)
    loaded = _load_config(config_file, tools)
    try:
        changes = changes_from_diff(data, loaded, ignores)
    except DiffError as e:
        raise BadInput(f"{patch or git_range}: {e}") from None
    comments = _comments(comments_file, own_login, comment_text, comment_at)
    return loaded, review_core.Change(changes, files=loader, comments=comments, checkout=repo)


def _comments(comments_file: Path | None, own_login: str | None, text: str | None,
              at: str | None) -> list[ReviewComment]:
    """--comments, and --comment at --at."""
    comments = load_comments(comments_file, own_login) if comments_file else []
    if text and at:
        path, line = _parse_at(at)
        comments.append(ReviewComment(path=path, line=line, body=text, author="cli", id="cli"))
    return comments


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


def load_dismissals(path: Path | None) -> LoadedDismissals:
    """`--dismissals FILE` (none: no dismissal); an invalid file is an error (exit 2) in the
    words the Action uses."""
    if path is None:
        return LoadedDismissals()
    try:
        loaded = parse_dismissals(read_file(path), name=str(path))
    except ConfigError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(2)
    if loaded.error is not None:
        click.echo(f"Error: {loaded.error.removesuffix('; no dismissal applies')}", err=True)
        sys.exit(2)
    return LoadedDismissals(loaded.dismissals)
