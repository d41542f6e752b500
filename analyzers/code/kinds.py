"""What a file that is not code is, in a reader's words: documentation, an image, data or
configuration, a lock file — so that "not analysed" says "not code (documentation)" for an
`.rst` file and "not code (image)" for an `.svg`, never "unknown language". Pure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

KINDS: Mapping[str, str] = {
    **dict.fromkeys((".md", ".rst", ".txt", ".adoc", ".asciidoc", ".rdoc", ".org", ".tex"), "documentation"),
    **dict.fromkeys((".svg", ".png", ".jpg", ".jpeg", ".gif", ".ico", ".webp", ".bmp", ".avif"), "image"),
    **dict.fromkeys((".yml", ".yaml", ".json", ".toml", ".ini", ".cfg", ".conf", ".xml", ".csv", ".env",
                     ".properties"), "data or configuration"),
    **dict.fromkeys((".woff", ".woff2", ".ttf", ".otf", ".eot"), "font"),
    ".lock": "lock file",
}
NAMES: Mapping[str, str] = {  # files known by their whole name
    **dict.fromkeys(("readme", "changelog", "changes", "license", "licence", "authors", "contributing",
                     "notice", "copying"), "documentation"),
}


def kind_of(path: str) -> str | None:
    """What the file at `path` is, when it is a kind that is not code (None: not known)."""
    p = PurePosixPath(path.lower())
    return KINDS.get(p.suffix) or NAMES.get(p.stem if p.suffix in ("", ".txt", ".md", ".rst") else p.name)


def not_code(path: str, language: str | None) -> str:
    """Why a hunk of `path` is not analysed as code: its language where it has one ("not code
    (yaml)"), else its kind ("not code (documentation)", "not code (image)"), else "not code
    (no known language)"."""
    return f"not code ({language or kind_of(path) or 'no known language'})"
