"""What a reader sees of a comment: the lines of its paragraphs, read by a CommonMark parser
(markdown-it-py). Pure; the commands of bot/core/pr_commands.py are read only from these lines.

A comment can hold text that GitHub does not show, or shows as something other than prose: an
indented or fenced code block, an HTML block or an HTML comment (`<!-- @rtcbot ignore … -->`),
the body of a `<details>` (folded away) or of any other HTML element, a block quote (someone
else's words), a list item, an image's alternative text. None of it is read:

- only top-level paragraphs count (not a block quote's or a list item's), each line as GitHub
  shows it (a single newline is a line break in a comment);
- a paragraph is read up to its first inline HTML (`<!--`, `<span hidden>`, `<details>`…): what
  follows may be hidden by it;
- a paragraph inside an HTML element that an HTML block or inline HTML opened and has not closed
  yet (a `<details>` and its blank-line-separated body) is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)\b[^>]*?(/?)>")
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})
_KEPT = ("text", "code_inline", "softbreak", "hardbreak")  # an inline's children a reader sees as text


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def _opened(html: str) -> int:
    """How many elements `html` opens and leaves open (less those it closes); comments and void
    or self-closing elements open none."""
    depth = 0
    for close, name, selfclosing in _TAG.findall(_COMMENT.sub("", html)):
        if name.lower() in _VOID or selfclosing:
            continue
        depth += -1 if close else 1
    return depth


def _paragraph(children: Sequence[Token]) -> tuple[list[str], bool]:
    """The lines of a paragraph's text up to its first inline HTML, and whether it had any."""
    lines: list[str] = []
    line = ""
    for child in children:
        if child.type == "html_inline":
            return [*lines, line], True
        if child.type in ("softbreak", "hardbreak"):
            lines, line = [*lines, line], ""
        elif child.type == "code_inline":
            line += f"{child.markup}{child.content}{child.markup}"
        elif child.type in _KEPT:
            line += child.content
    return [*lines, line], False


def visible_lines(body: str | None) -> Iterator[str]:
    """The lines of `body`'s top-level paragraphs outside any open HTML element, each up to the
    paragraph's first inline HTML (the module's docstring)."""
    tokens = _parser().parse(body or "")
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == "html_block":
            depth = max(0, depth + _opened(tok.content))
        elif tok.type == "inline" and tok.level == 1 and tokens[i - 1].type == "paragraph_open":
            lines, cut = _paragraph(tok.children or [])
            if depth == 0:
                yield from lines
            if cut:
                depth = max(0, depth + sum(_opened(c.content) for c in tok.children or [] if c.type == "html_inline"))
