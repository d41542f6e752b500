"""`rtcbot review --help`'s words that come from the registries: the analyzers (analyzers/registry.py)
and the formats (reporters/), with the defaults and why they differ from the Action's."""

from __future__ import annotations

from analyzers import registry
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
