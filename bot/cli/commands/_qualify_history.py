"""The hunks `rtcbot qualify` scores: those of the last N first-parent commits (or of
BASE..HEAD) that EditingRTC would score (code, changed, not too long), sampled stratified by
language and hunk size, seeded (analyzers/qualify.py).

Git runs with a clean environment and a private HOME (analyzers/tools/programs.py), never through a
shell, with the checkout's path as its working directory (never an argument) and the range
after `--end-of-options`; the checkout's config cannot start a program (bot/cli/commands/_git.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from analyzers.code.diff import CODE_LANGUAGES, DEFAULT_IGNORES, DiffError, parse_diff
from analyzers.qualify import Candidate, stratified_sample
from bot.cli.commands._git import git as _git

DIFF_FLAGS = ["--no-color", "--no-ext-diff", "--no-textconv"]


def git(args: list[str], repo: Path) -> str:
    return _git(args, repo).decode("utf-8", errors="replace")


def commits(repo: Path, git_range: str | None, last: int) -> list[list[str]]:
    """[commit, parents…] of each first-parent commit, newest first."""
    if git_range is not None:
        if ".." not in git_range or git_range.startswith("-"):
            raise click.BadParameter("expected BASE..HEAD", param_hint="--git")
        args = ["rev-list", "--first-parent", "--parents", "--end-of-options", git_range]
    else:
        args = ["rev-list", "--first-parent", "--parents", "-n", str(last), "--end-of-options", "HEAD"]
    return [line.split() for line in git(args, repo).splitlines() if line.strip()]


def candidates(repo: Path, history: list[list[str]], max_hunk_chars: int) -> list[Candidate]:
    """Every hunk of the history that EditingRTC would score (code, changed, not too long)."""
    out: list[Candidate] = []
    for commit, *parents in reversed(history):  # oldest first
        if parents:
            data = git(["diff", *DIFF_FLAGS, parents[0], commit, "--"], repo)
        else:
            data = git(["diff-tree", "-p", "--root", "--no-commit-id", *DIFF_FLAGS, commit, "--"], repo)
        if not data.strip():
            continue
        try:
            changes = parse_diff(data, ignore=DEFAULT_IGNORES)
        except DiffError:
            continue
        for fc, h in changes.hunks():
            changed = len(h.added_lines) + len(h.removed_lines)
            if (fc.language not in CODE_LANGUAGES or not changed
                    or len(h.old_code) + len(h.new_code) > max_hunk_chars):
                continue
            out.append(Candidate(commit[:12], fc.path, fc.language or "", changed, h.old_code, h.new_code, h.header))
    return out


def repository_name(repo: Path) -> str:
    """The origin's URL without credentials, else the folder's name (never a local path)."""
    try:
        url = git(["config", "--get", "remote.origin.url"], repo).strip()
    except click.ClickException:
        url = ""
    return re.sub(r"//[^/@]*@", "//", url) if url else repo.resolve().name


def sample_history(repo: Path, git_range: str | None, last: int, max_hunks: int, seed: int,
                   max_hunk_chars: int) -> tuple[str, int, list[Candidate]]:
    """(the revisions in words, the hunks available, the stratified sample of them)."""
    history = commits(repo, git_range, last)
    if not history:
        raise click.ClickException(f"no commits in {git_range or 'HEAD'}")
    pool = candidates(repo, history, max_hunk_chars)
    if not pool:
        raise click.ClickException(f"no code hunks to score in {len(history)} commit(s)")
    revisions = git_range or f"last {len(history)} first-parent commits of {history[0][0][:12]}"
    return revisions, len(pool), stratified_sample(pool, max_hunks, seed)
