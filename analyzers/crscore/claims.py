"""Claims about a change: one LLM generation per hunk, parsed into pseudo-references.

The model is asked for two numbered lists, "Summary of changes" and "Implications". Small
models number badly (bullets, "1)" or every item "1."), repeat themselves, put text before
the first heading, or stop in the middle of an item when they hit the token limit; the parser
takes every list item under either heading, joins wrapped lines, drops exact repeats and drops
a last item that was cut off (it does not end like a sentence). The request goes through
`LLMClient.sample`, so it is cached like every LLM call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

MAX_BLOCK_CHARS = 4000
MAX_TOKENS = 256

SYSTEM = "You are an experienced software engineer who explains code changes precisely."
INSTRUCTIONS = (
    "Read the change below and write two short sections.\n"
    "Under the heading \"Summary of changes\", list what the change does, one numbered point each.\n"
    "Under the heading \"Implications\", list what the change may cause or affect, one numbered point each.\n"
    "Each point is one or two complete sentences. Do not nest points and do not repeat a point."
)


class SupportsSample(Protocol):
    def sample(self, messages: list[dict[str, str]], *, n: int = ..., temperature: float = ...,
               max_tokens: int = ..., stop: list[str] | None = ..., seed: int = ...) -> list[str]: ...


def _cut(text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "\n…"


def build_messages(diff: str, removed: str, added: str) -> list[dict[str, str]]:
    """The chat for one hunk: the diff, then its removed and its added lines (each cut)."""
    user = (
        f"{INSTRUCTIONS}\n\n"
        f"Diff:\n{_cut(diff.strip())}\n\n"
        f"Removed lines:\n{_cut(removed.strip()) or '(none)'}\n\n"
        f"Added lines:\n{_cut(added.strip()) or '(none)'}\n\n"
        "Summary of changes:\n"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@dataclass
class Claims:
    summary: list[str] = field(default_factory=list)
    implications: list[str] = field(default_factory=list)

    @property
    def all(self) -> list[str]:
        return [*self.summary, *self.implications]


_HEADING = re.compile(
    r"^[\s#>*_]*(summary(?:\s+of\s+(?:the\s+)?changes?)?|changes|implications?)\s*[*_]*\s*:?\s*[*_]*\s*(.*)$",
    re.I,
)
_ITEM = re.compile(r"^\s*(?:\(?\d{1,2}\s*[.):]|[-*•])\s+(.*)$")
_ENDS_SENTENCE = re.compile(r"""[.!?)`"'\]]\s*$""")


def _clean(item: str) -> str:
    item = re.sub(r"\s+", " ", item).strip()
    return re.sub(r"^\*\*(.+?)\*\*:?\s*", r"\1: ", item).strip() if item.startswith("**") else item


def parse_claims(text: str) -> Claims:
    """Numbered (or bulleted) points under "Summary of changes" and "Implications".

    Text before any heading counts as the summary (the prompt ends with that heading, so the
    answer usually starts inside it). Lines that are not items continue the previous item.
    With no list markers at all, each non-empty line is a point.
    """
    claims = Claims()
    section = claims.summary
    current: list[str] | None = None
    items: list[tuple[list[str], list[str], bool]] = []  # (section, parts, had a list marker)
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            current = None
            continue
        head = _HEADING.match(line)
        if head and len(line) < 60 and not _ITEM.match(line):
            section = claims.implications if head.group(1).lower().startswith("impl") else claims.summary
            current = None
            line = head.group(2).strip()
            if not line:
                continue
        m = _ITEM.match(line)
        if m:
            current = [m.group(1)]
            items.append((section, current, True))
        elif current is not None:
            current.append(line)
        else:
            current = [line]
            items.append((section, current, False))
    if any(marked for _, _, marked in items):  # then unnumbered paragraphs are commentary
        items = [it for it in items if it[2]]
    seen: set[str] = set()
    kept: list[tuple[list[str], str]] = []
    for sec, parts, _ in items:
        item = _clean(" ".join(parts))
        key = item.lower().rstrip(".")
        if not item or key in seen:
            continue
        seen.add(key)
        kept.append((sec, item))
    if kept and not _ENDS_SENTENCE.search(kept[-1][1]):
        kept.pop()  # the generation stopped in the middle of its last point
    for sec, item in kept:
        sec.append(item)
    return claims


def generate_claims(llm: SupportsSample, diff: str, removed: str, added: str,
                    max_tokens: int = MAX_TOKENS) -> Claims:
    """One greedy generation for one hunk (cached by the LLM client), parsed."""
    text = llm.sample(build_messages(diff, removed, added), n=1, temperature=0.0,
                      max_tokens=max_tokens)[0]
    return parse_claims(text)
