"""One rule for text rtcbot did not write: a model's answer, a commenter's text, a pull
request's title, a file path, a finding's title or message. Every reporter renders such text
through this module, so that it reads as the characters it is and can do nothing else.

In Markdown (check-run summaries and text, PR reviews, the step summary, SARIF's `markdown`,
`--format markdown` and `github-review`) `inert` makes the text literal:

- no mention notifies anyone: a word joiner (U+2060, invisible) follows every `@` where GitHub
  would read a mention (not after a letter or digit: `x@y.org` and `RTC@3` stay as they are),
  so no `@user` or `@org/team` is linked or notified; so does every `#` (and `GH-`) before a
  digit, so no `org/repo#12` writes a cross-reference into another issue;
- no link, image or raw HTML: `[` and `]` are escaped (so no link text hides its destination
  and no link reference is defined), `!` before `[`, `<` as `&lt;` where a tag, comment or
  autolink could start, `&` as `&amp;` where an entity could (`&#64;` spells "@"); so no
  `<img>`, `<a>`, `</details>` or entity is parsed. A bare URL may still be linked by GitHub,
  its text being its destination, unless an escape or a word joiner would land inside it
  (autolinks are read from the raw source, so the backslash would show and spoil the link):
  then a word joiner after its scheme keeps it plain text;
- no formatting and no block: emphasis, code, strike-through, math and table-cell characters
  are escaped everywhere, and what would open a quote, heading, list, rule or table at the
  start of a line is escaped there; inline (the default) the text is one line, so it stays in
  its table cell or list item.

Code goes in a code span (`code`) or a fenced block (`fenced`) whose backtick run is longer than
any inside (the fence of `Fix.suggestion`), never as Markdown. Text shown as plain text (check-run
and annotation titles, annotation messages, SARIF `text`, workflow commands) only needs its
mentions defused (`plain`). rtcbot's own Markdown (its tables, links, `<details>`) is written by
the reporters around these pieces and is untouched.

`unclosed` tells a cut where rtcbot's own blocks (a fence, `<details>`) are left open.
"""

from __future__ import annotations

import re

from analyzers.report import fence_for

JOINER = "\u2060"  # WORD JOINER: invisible, and no part of a GitHub login or team name
# "@" where GitHub would read a mention: not after a letter or digit (an e-mail, "RTC@3"),
# before what a login or team name starts with, or at the end (text may follow it)
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9_]|$)")
# an issue or pull-request reference ("#12", "org/repo#12", "GH-12"): GitHub links it and
# writes "mentioned this" into that timeline, in any repository
_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)", re.I)
# escaped wherever they are: emphasis, code, link and image brackets, table cells, strike-
# through, math; "<" only where it could open a tag, a comment or an autolink, "&" only where
# it could start an entity (one could spell "<" or "@"), "!" only before "["
_SPECIAL = re.compile(r"[\\`*_\[\]|~$]|<(?=[A-Za-z/!?])|&(?=[#A-Za-z])|!(?=\[)")
_ENTITIES = {"<": "&lt;", "&": "&amp;"}
# what opens a block at the start of a line: a quote, an ordered or bullet item, a heading, a
# rule or setext underline (fences, tables and tags start with characters escaped anyway)
_LINE_START = re.compile(r"^(\d{1,9})([.)])|^[>#+=:-]")
# A bare URL is autolinked from the raw source (GitHub's "http://", "https://", "ftp://" and
# "www." autolinks, markdown-it's linkify), so an escape inside one would show and spoil its
# destination: where one would, a word joiner after the scheme's ":" (or after "www") keeps
# the URL from being linked (read as "//host/..." at most), and the escapes read as intended.
# Any scheme, any "www", and the run up to an ASCII space or "<": wider than any renderer's.
_AUTOLINK = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?=//)|www(?=\.)", re.I)
_URL_END = re.compile(r"[\x00-\x20\x7f<]")
_NEWLINES = re.compile(r"\r\n|\r|\n")  # CommonMark's line endings
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def plain(text: str) -> str:
    """`text` for a place GitHub shows as plain text: every mention (and issue reference)
    defused."""
    return _REFERENCE.sub(lambda m: m.group(1) + JOINER, _MENTION.sub("@" + JOINER, text))


def _escaped(text: str) -> str:
    return _SPECIAL.sub(lambda m: _ENTITIES.get(m.group(), "\\" + m.group()), text)


def _unlinked(text: str) -> str:
    """`text` with every bare URL that an escape would spoil kept from being autolinked."""
    def defuse(m: re.Match[str]) -> str:
        end = _URL_END.search(text, m.end())
        run = text[m.start():end.start() if end else len(text)]
        return m.group() + JOINER if plain(_escaped(run)) != run else m.group()
    return _AUTOLINK.sub(defuse, text)


def _line(text: str) -> str:
    text = _escaped(_unlinked(text.strip()))
    m = _LINE_START.match(text)
    if m and m.group(1):
        text = f"{m.group(1)}\\{text[len(m.group(1)):]}"
    elif m:
        text = "\\" + text
    return plain(text)


def inert(text: str, *, block: bool = False) -> str:
    """`text` as literal Markdown: it renders as its own characters, and nothing in it
    mentions, links, embeds, opens HTML or closes a block around it.

    Inline (the default) the text becomes one line (line breaks become spaces), safe in a
    table cell, a list item, a heading or between `**`. `block=True` keeps its lines (blank
    lines separate paragraphs; each line's indentation is dropped, so none becomes code)."""
    lines = _NEWLINES.split(text)
    if not block:
        return _line(" ".join(ln.strip() for ln in lines if ln.strip()))
    return "\n".join(_line(ln) for ln in lines).strip("\n")


def code(text: str) -> str:
    """`text` as an inline code span: one line, delimited by a backtick run longer than any
    inside (so nothing in it can end the span); "" for empty text."""
    text = " ".join(ln.strip() for ln in _NEWLINES.split(text) if ln.strip())
    if not text:
        return ""
    ticks = "`" * (1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str, info: str = "") -> list[str]:
    """`text` as the lines of a fenced code block whose fence is longer than any backtick run
    in it. A caller that indents the block (a list item) indents every line."""
    fence = fence_for(text)
    return [f"{fence}{info}", *_NEWLINES.split(text.rstrip("\n")), fence]


def unclosed(markdown: str) -> str:
    """What closes the blocks `markdown` leaves open: its last code fence, then each
    `<details>` rtcbot opened ("" when none is open). A `<details>` inside a code block is code,
    and untrusted text outside one cannot hold `<` (`inert`), so the count is rtcbot's own."""
    fence: str | None = None
    depth = 0
    for ln in _NEWLINES.split(markdown):
        m = _FENCE.match(ln)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not ln.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        if m and not (m.group(1)[0] == "`" and "`" in ln.strip()[len(m.group(1)):]):
            fence = m.group(1)
            continue
        depth += ln.count("<details>") - ln.count("</details>")
    closing = f"\n{fence}" if fence is not None else ""
    return closing + "\n</details>" * max(0, depth)
