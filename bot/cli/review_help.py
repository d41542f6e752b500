"""`rtcbot review`'s options and their help (`REVIEW_OPTIONS`); the words that come from the
registries — the analyzers (analyzers/registry.py) and the formats (reporters/), with the
defaults and why they differ from the Action's — are read when the help is shown."""

from __future__ import annotations

from pathlib import Path

import click

from analyzers import registry
from bot.shell.commands import LazyHelp, options
from reporters import printable


def dashed(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(n.replace("_", "-") for n in names)


def analyzers_help() -> str:
    """--analyzers: every registered analyzer, the default here, and the Action's."""
    readers = [n for n in registry.comment_readers() if n not in registry.PATCH_DEFAULTS]
    named_only = [n for n in registry.DEFAULT_ANALYZERS if n not in registry.PATCH_DEFAULTS and n not in readers]
    why = "".join(f"; {n.replace('_', '-')} only when named here: it needs "
                  f"{', '.join(registry.needs([n])) or 'its tools'} and the files at the head (--repo or --git)"
                  for n in named_only)
    return (f"Comma-separated, or all: {dashed(list(registry.ANALYZERS))}. Default: "
            f"{dashed(registry.PATCH_DEFAULTS)}, and {dashed(readers)} when comments are given "
            f"(--comments, --comment), with --config's on/off and SynthesisRTC with a test command. "
            f"The Action's default is {dashed(registry.DEFAULT_ANALYZERS)}: on a pull request it has "
            f"the comments and the files{why}.")


def formats_help() -> str:
    """--format: every output that prints."""
    return f"One of: {', '.join(printable())}."


def _format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """--format: one of the outputs reporters/ can print (read when the command runs)."""
    known = printable()
    if value not in known:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(known)}")
    return value


REVIEW_OPTIONS = options(
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
