"""`rtcbot` commands: review a patch or a git range; `eval …`, `serve`, `worker`, `action`.

Every command lives in this module or in one module of `bot.commands`, found at start-up.
Bad input is one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import importlib
import json
import logging
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from analyzers import registry
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.diff import ChangeSet, DiffError, parse_diff
from analyzers.llm import LLMError
from analyzers.pipeline import run_all
from analyzers.report import AnalyzerReport
from bot import commands
from bot.commands._common import llm_factory, llm_options, pop_llm_settings

MAX_PATCH_BYTES = 64 * 1024 * 1024


class Main(click.Group):
    """Turns the errors a user can act on into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LLMError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.exit(0)


@click.group(cls=Main)
@click.version_option(package_name="rtcbot")
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
def main(verbose: int) -> None:
    """rtcbot: label-free trust scores for code changes and review comments."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@main.group("eval")
def eval_group() -> None:
    """Evaluate models on datasets (resumable, with a closing table)."""


# -- review -------------------------------------------------------------------------------
def _read_patch(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read(MAX_PATCH_BYTES + 1)
    p = Path(path)
    if not p.exists():
        raise click.ClickException(f"{path}: no such file")
    if p.is_dir():
        raise click.ClickException(f"{path}: is a directory, not a patch file")
    if p.stat().st_size > MAX_PATCH_BYTES:
        raise click.ClickException(f"{path}: larger than {MAX_PATCH_BYTES // 2**20} MB")
    return p.read_bytes()


def _git(args: list[str], cwd: Path) -> bytes:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise click.ClickException("git is not installed") from None
    if out.returncode != 0:
        msg = out.stderr.decode(errors="replace").strip().splitlines()
        raise click.ClickException(f"git {' '.join(args)} failed: {msg[-1] if msg else out.returncode}")
    return out.stdout


def _git_loader(cwd: Path, head: str) -> Callable[[str], str | None]:
    def load(path: str) -> str | None:
        out = subprocess.run(["git", "show", f"{head}:{path}"], cwd=cwd, capture_output=True, check=False)
        return out.stdout.decode("utf-8", errors="replace") if out.returncode == 0 else None

    return load


def _parse_at(at: str) -> tuple[str, int]:
    path, sep, line = at.rpartition(":")
    if not sep or not path or not line.isdigit() or int(line) < 1:
        raise click.BadParameter(f"expected PATH:LINE, got {at!r}", param_hint="--at")
    return path, int(line)


def load_comments(path: Path) -> list[ReviewComment]:
    """A JSON list of {path, line, body, author}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise click.ClickException(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise click.ClickException(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, list):
        raise click.ClickException(f"{path}: expected a JSON list of comments")
    out = []
    for i, c in enumerate(data):
        if not isinstance(c, dict) or not isinstance(c.get("body"), str) or not c.get("path"):
            raise click.ClickException(f"{path}: comment {i} needs at least 'path' and 'body'")
        try:
            line = int(c.get("line") or 0)
        except (TypeError, ValueError):
            raise click.ClickException(f"{path}: comment {i} has a non-integer 'line'") from None
        out.append(ReviewComment(path=str(c["path"]), line=line, body=c["body"],
                                 author=str(c.get("author") or ""), id=c.get("id", i)))
    return out


RENDERERS: dict[str, str] = {
    "text": "analyzers.report:render_text",
    "json": "analyzers.report:render_json",
    "markdown": "analyzers.report:render_markdown",
    "sarif": "analyzers.sarif:render_sarif",
}


def render(reports: list[AnalyzerReport], fmt: str) -> str:
    module, attr = RENDERERS[fmt].split(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        raise click.ClickException(f"the {fmt} output is not available in this build") from None
    return str(fn(reports))


@main.command()
@click.argument("patch", required=False, metavar="PATCH_FILE")
@click.option("--git", "git_range", metavar="BASE..HEAD", help="Review a range of the git checkout here.")
@click.option("--analyzers", "analyzer_spec", default=None, metavar="LIST",
              help="Comma-separated: editing-rtc, crscore, autofix, synthesis-rtc, or all. "
                   "Default: editing-rtc (plus crscore when comments are given).")
@click.option("--format", "fmt", type=click.Choice(list(RENDERERS)), default="text", show_default=True)
@click.option("--comments", "comments_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Review comments to score: a JSON list of {path, line, body, author}.")
@click.option("--comment", "comment_text", help="One review comment to score (with --at).")
@click.option("--at", "comment_at", metavar="PATH:LINE", help="Where --comment was written.")
@click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
              help="Checkout at the head of the change (files for AutoFix and the smell detectors).")
@click.option("--test-command", default=None, help="Enables the execution oracles (runs the repository's tests).")
@click.option("--ignore", "ignores", multiple=True, metavar="GLOB", help="Extra ignore globs.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the output here too.")
@llm_options
def review(patch: str | None, git_range: str | None, analyzer_spec: str | None, fmt: str,
           comments_file: Path | None, comment_text: str | None, comment_at: str | None,
           repo: Path | None, test_command: str | None, ignores: tuple[str, ...],
           out_file: Path | None, **kwargs: Any) -> None:
    """Score a change's hunks and review comments.

    The change is PATCH_FILE (a git diff, git show -p or format-patch; '-' for stdin) or
    --git BASE..HEAD in the checkout here (or at --repo)."""
    settings = pop_llm_settings(kwargs)
    if bool(patch) == bool(git_range):
        raise click.UsageError("give either a PATCH_FILE or --git BASE..HEAD")
    if bool(comment_text) != bool(comment_at):
        raise click.UsageError("--comment and --at go together")
    if repo is not None and not repo.is_dir():
        raise click.ClickException(f"--repo {repo}: no such directory")
    loader = None
    if git_range:
        cwd = repo or Path.cwd()
        if ".." not in git_range:
            raise click.BadParameter("expected BASE..HEAD", param_hint="--git")
        data = _git(["diff", "--no-color", "--no-ext-diff", git_range], cwd)
        head = git_range.split("..")[-1].lstrip(".") or "HEAD"
        loader = _git_loader(cwd, head)
        if not data.strip():
            raise click.ClickException(f"git diff {git_range} is empty: nothing to review")
    else:
        assert patch is not None
        data = _read_patch(patch)
    from analyzers.diff import DEFAULT_IGNORES

    try:
        changes: ChangeSet = parse_diff(data, ignore=(*DEFAULT_IGNORES, *ignores))
    except DiffError as e:
        raise click.ClickException(f"{patch or git_range}: {e}") from None

    comments = load_comments(comments_file) if comments_file else []
    if comment_text and comment_at:
        path, line = _parse_at(comment_at)
        comments.append(ReviewComment(path=path, line=line, body=comment_text, author="cli", id="cli"))
    if analyzer_spec:
        try:
            names = registry.parse_names(analyzer_spec)
        except registry.UnknownAnalyzer as e:
            raise click.BadParameter(str(e), param_hint="--analyzers") from None
    else:
        names = ["editing_rtc"] + (["crscore"] if comments else [])
    ctx = AnalysisContext(llm_factory=llm_factory(settings), comments=comments, repo_path=repo,
                          file_loader=loader, test_command=test_command)
    reports = run_all(names, changes, ctx)
    text = render(reports, fmt)
    click.echo(text)
    if out_file:
        out_file.write_text(text, encoding="utf-8")
    if reports and all(r.error for r in reports):
        for err in dict.fromkeys(r.error for r in reports if r.error):
            click.echo(f"Error: {err}", err=True)
        sys.exit(1)


def _load_commands() -> None:
    for mod in pkgutil.iter_modules(commands.__path__):
        if mod.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"bot.commands.{mod.name}")
        except Exception as e:  # a broken plug-in must not take the other commands down
            click.echo(f"warning: command module {mod.name} failed to load: {e}", err=True)
            continue
        cmd = getattr(module, "command", None)
        if isinstance(cmd, click.Command):
            (eval_group if getattr(module, "GROUP", "eval") == "eval" else main).add_command(cmd)


_load_commands()

if __name__ == "__main__":
    main()
