"""Text as a reader sees it: what the leak check compares (analyzers/rtc/leak.py). Pure.

A description can carry code that a reader (a person, or the model that is given the
description) reads as that code while its characters differ: zero-width spaces, soft hyphens or
other invisible characters inside the words, Cyrillic or Greek look-alikes of Latin letters,
full-width or mathematical letters, combining marks, or letters spaced apart ("r e t u r n  T r
u e"). Before comparing, both the description and the code are read the same way:

- `fold`: Unicode NFKC; the format characters (category Cf: zero-width spaces and joiners, the
  soft hyphen, direction marks, the BOM), the other default-ignorable characters (variation
  selectors, fillers) and combining marks dropped; each remaining non-ASCII character that
  Unicode's confusables (TR39, the data the `confusable-homoglyphs` package ships) say looks
  like an ASCII character read as that character, of the same kind where the look-alikes are
  several (Cyrillic `І` as `I`, `ӏ` as `l`, `О` as `O`); and the look-alikes TR39 leaves out
  (Greek `ε` as e, `τ` as t, small capitals: analyzers/rtc/extra_look_alikes.py).
- `unseparate`: a separator no code writes (`·`, `•`) between two letters read as a space, and
  single letters joined by one of `.`, `-`, `_` as letters spaced apart (`r·e·t·u·r·n`,
  `r.e.t.u.r.n`, `r-e-t`, `r_e_t` → `r e t u r n`; not `v1.2.3`, `user.id`, `foo_a_b`), three or
  more joined by `-` or `_` also beside a dot (`u-s-e-r.n-a-m-e` → `u s e r.n a m e`).
- `respace`: a run of three or more one-character tokens (letters spaced apart) read as the
  words it spells, split where the code's own words fit ("r e t u r n T r u e" → return, True).

ASCII text (nearly every honest description and most code) passes `fold` unchanged at once.
Both texts are read the same way, so what these change in the code they change in the quote.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache

from analyzers.rtc.extra_look_alikes import EXTRA_LOOK_ALIKES

# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt) that are not format
# characters (Cf): the combining grapheme joiner, Hangul and Khmer fillers, Mongolian and other
# variation selectors, the musical-symbol format marks and the tag/selector supplement
_IGNORABLE = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
              (0xE0000, 0xE0FFF))
RUN_MIN = 3  # one-character tokens in a row read as letters spaced apart
_LONGEST_WORD = 64  # a spaced-out run is split into code words of at most this many characters
_DOTS = "\u00b7\u2022\u2027\u2219\u22c5\u30fb\u2024\u2043"  # · • ‧ ∙ ⋅ ・ ․ ⁃: separators no code writes
# two or more single letters or digits joined by one and the same of . - _ (`r.e.t`, `i-f`), not
# inside a word or a dotted name (`foo_a_b`, `v1.2.3`, `user.id` stay as they are)
_SEPARATED = tuple(re.compile(rf"(?<![\w.{_DOTS}-])[^\W_](?:{re.escape(s)}[^\W_])+(?![\w.{_DOTS}-])")
                   for s in ".-_")
# three or more, also beside a dot (`u-s-e-r.n-a-m-e`: a dotted name spelt apart)
_SEPARATED_LONG = tuple(re.compile(rf"(?<![\w{_DOTS}-])[^\W_](?:{re.escape(s)}[^\W_]){{2,}}(?![\w{_DOTS}-])")
                        for s in "-_")
_DOT_BETWEEN = re.compile(rf"(?<=[^\W_])[{_DOTS}](?=[^\W_])")


def _ignorable(c: str) -> bool:
    o = ord(c)
    return unicodedata.category(c) == "Cf" or any(lo <= o <= hi for lo, hi in _IGNORABLE)


def _kind(c: str) -> tuple[bool, bool, bool]:
    return c.isalpha(), c.isdigit(), c.isupper()


@cache
def look_alikes() -> dict[str, str]:
    """Each non-ASCII character that looks like an ASCII one → that character: TR39's
    (`tr39_look_alikes`) and those it leaves out (analyzers/rtc/extra_look_alikes.py)."""
    return {**EXTRA_LOOK_ALIKES, **tr39_look_alikes()}


@cache
def tr39_look_alikes() -> dict[str, str]:
    """Each non-ASCII character that TR39's confusables pair with an ASCII one → that ASCII
    character; where several ASCII characters look alike (`l`, `I`, `1`, `|`), the one of the
    same kind (letter or digit, and case) wins, then TR39's own prototype."""
    from confusable_homoglyphs.confusables import confusables_data  # its JSON: loaded once, here

    def ascii_of(c: str) -> list[str]:
        return [e["c"] for e in confusables_data.get(c, ()) if len(e["c"]) == 1 and e["c"].isascii()
                and e["c"].isprintable() and not e["c"].isspace()]

    def family(a: str) -> set[str]:  # the ASCII characters that look like `a`, `a` included
        seen, todo = {a}, [a]
        while todo:
            for b in ascii_of(todo.pop()):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    out: dict[str, str] = {}
    for c in confusables_data:
        if len(c) != 1 or c.isascii():
            continue
        direct = ascii_of(c)
        if not direct:
            continue
        cands = sorted({b for a in direct for b in family(a)})
        want = _kind(c)
        out[c] = max(cands, key=lambda b: (sum(x == y for x, y in zip(_kind(b), want, strict=True)),
                                           b in direct))
    return out


@lru_cache(maxsize=8192)
def _read_char(c: str) -> str:
    """One non-ASCII character (after NFKC) as a reader sees it."""
    if _ignorable(c):
        return ""
    table = look_alikes()
    out = []
    for d in unicodedata.normalize("NFD", c):
        if unicodedata.combining(d) or unicodedata.category(d) in ("Mn", "Me") or _ignorable(d):
            continue
        out.append(table.get(d, d))
    return "".join(out)


def fold(text: str) -> str:
    """`text` as a reader sees it (the module's docstring): ASCII text is returned as it is."""
    if text.isascii():
        return text
    return "".join(c if c.isascii() else _read_char(c) for c in unicodedata.normalize("NFKC", text))


def unseparate(text: str) -> str:
    """`text` with a dot-like separator no code writes between two letters read as a space
    (`if·not·token` → `if not token`, `r·e·t` → `r e t`) and single letters joined by `.`, `-`
    or `_` spaced apart (`r.e.t`, `r_e_t` → `r e t`), for `respace` to read as words."""
    for run in (*_SEPARATED, *_SEPARATED_LONG):
        text = run.sub(lambda m: " ".join(m.group()[::2]), text)
    return _DOT_BETWEEN.sub(" ", text) if not text.isascii() else text


def respace(toks: Sequence[str], words: Iterable[str]) -> list[str]:
    """`toks` with each run of RUN_MIN or more one-character tokens (letters spaced apart) joined
    and split again, longest first, into `words` (the code's own words) where they fit; what no
    word fits stays one character a token."""
    vocab = {w for w in words if len(w) > 1}
    longest = min(_LONGEST_WORD, max(map(len, vocab), default=0))
    out: list[str] = []
    i = 0
    while i < len(toks):
        j = i
        while j < len(toks) and len(toks[j]) == 1:
            j += 1
        if j - i < RUN_MIN:
            out.extend(toks[i:max(j, i + 1)])
            i = max(j, i + 1)
            continue
        out.extend(_split(''.join(toks[i:j]), vocab, longest))
        i = j
    return out


def _split(run: str, vocab: set[str], longest: int) -> list[str]:
    out: list[str] = []
    at = 0
    while at < len(run):
        size = next((n for n in range(min(longest, len(run) - at), 1, -1) if run[at:at + n] in vocab), 1)
        out.append(run[at:at + size])
        at += size
    return out
