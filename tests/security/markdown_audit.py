"""What a published Markdown body can do, read as a CommonMark (+ GFM tables) parser reads it:
the live mentions, the links to a host, the images, and the raw HTML that is not rtcbot's own
(`<details>`, `<summary>`, `<sub>`, its `<!-- rtcbot:… -->` markers)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

# GitHub's mention syntax: "@login" or "@org/team", not after a word character or a backtick
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9][A-Za-z0-9-]*(/[A-Za-z0-9_.-]+)?")
OWN_HTML = re.compile(r"</?details>|<summary>[^<]*</summary>|</?summary>|</?sub>|<!-- rtcbot:[a-z]+:[0-9a-f]+ -->")
TAG = re.compile(r"<[A-Za-z/!?]")


def parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    try:  # GFM's autolinks of bare URLs, where linkify-it-py is installed
        import linkify_it  # noqa: F401

        md = md.enable("linkify")
        md.options["linkify"] = True
    except ImportError:
        pass
    return md


@dataclass
class Audit:
    mentions: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # to the planted host, their text not their address
    images: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)  # raw HTML that is not rtcbot's own

    @property
    def clean(self) -> bool:
        return not (self.mentions or self.links or self.images or self.html)

    def add(self, other: Audit) -> None:
        for name in ("mentions", "links", "images", "html"):
            getattr(self, name).extend(getattr(other, name))


def _walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for t in tokens:
        out.append(t)
        if t.children:
            out += _walk(t.children)
    return out


def _link_text(tokens: list[Token], i: int) -> str:
    text, depth = [], 0
    for t in tokens[i + 1:]:
        if t.type == "link_close" and depth == 0:
            break
        depth += (t.type == "link_open") - (t.type == "link_close")
        text.append(t.content)
    return "".join(text)


def audit(markdown: str, host: str) -> Audit:
    """Everything in `markdown` that mentions, links to `host` behind other text, embeds an
    image, or is raw HTML other than rtcbot's own."""
    a = Audit()
    for block in parser().parse(markdown):
        if block.type == "html_block":
            _html(block.content, a)
        if block.type != "inline" or not block.children:
            continue
        kids = block.children
        run = []  # adjacent text, as one text node of the rendered HTML
        for i, t in enumerate(kids + [Token("end", "", 0)]):
            if t.type in ("text", "softbreak"):
                run.append(t.content if t.type == "text" else "\n")
                continue
            a.mentions += [m.group() for m in MENTION.finditer("".join(run))]
            run = []
            if t.type == "image":
                a.images.append(str(t.attrGet("src")))
            elif t.type == "link_open":
                href = str(t.attrGet("href"))
                on_github = href.startswith("/") and not href.startswith("//")  # rtcbot's links to lines
                # a bare URL's text is its destination as written; the href is that, percent-encoded
                shown = {h for u in (href, unquote(href)) for h in (u, u.split("://", 1)[-1])}
                if host in href and not on_github and _link_text(kids, i) not in shown:
                    a.links.append(href)
            elif t.type == "html_inline":
                _html(t.content, a)
    return a


def _html(content: str, a: Audit) -> None:
    rest = OWN_HTML.sub("", content)
    if TAG.search(rest):
        a.html.append(content.strip()[:200])
    a.mentions += [m.group() for m in MENTION.finditer(rest)]  # text in HTML is text too


def texts(markdown: str) -> list[str]:
    """The text of each paragraph, table cell or heading, as a reader sees it."""
    out = []
    for block in parser().parse(markdown):
        if block.type == "inline":
            out.append("".join(t.content if t.type in ("text", "code_inline") else "\n" if t.type == "softbreak"
                               else "" for t in _walk(block.children or [])))
    return out


def bodies_of(value: Any) -> list[str]:
    """Every string in a JSON value (a request body, a SARIF log), depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in bodies_of(v)]
    if isinstance(value, list):
        return [s for v in value for s in bodies_of(v)]
    return []
