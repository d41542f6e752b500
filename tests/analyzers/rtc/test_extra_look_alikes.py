"""The look-alikes TR39 leaves out (analyzers/rtc/extra_look_alikes.py): each is one TR39 lacks,
reads as one ASCII letter, and a line written in them reads as the line."""

from __future__ import annotations

import unicodedata

import pytest

from analyzers.rtc.extra_look_alikes import EXTRA_LOOK_ALIKES
from analyzers.rtc.leak import leak_reason
from analyzers.rtc.visible_text import fold, look_alikes, tr39_look_alikes


def test_every_entry_is_one_tr39_leaves_out_and_reads_as_one_ascii_letter() -> None:
    tr39 = tr39_look_alikes()
    for c, a in EXTRA_LOOK_ALIKES.items():
        assert len(c) == 1 and not c.isascii() and c.isalpha(), unicodedata.name(c)
        assert c not in tr39, f"{unicodedata.name(c)} is in TR39 already (as {tr39[c]!r})"
        assert unicodedata.normalize("NFKC", c) == c, f"NFKC reads {unicodedata.name(c)} already"
        assert len(a) == 1 and a.isascii() and a.isalpha(), unicodedata.name(c)
        assert look_alikes()[c] == a and fold(c) == a


@pytest.mark.parametrize(("shown", "read"), [
    ("r\u03b5\u03c4urn", "return"),  # Greek ε, τ
    ("\u0280\u1d07\u1d1b\u1d1c\u0280\u0274 T\u0280\u1d1c\u1d07", "return True"),  # small capitals
    ("\u0442\u043e\u043a\u0454n", "token"),  # Cyrillic т, к, є (о is TR39's)
    ("\u03c7 = \u03ba", "x = k"),  # Greek χ, κ
])
def test_words_in_them_read_as_the_words(shown: str, read: str) -> None:
    assert fold(shown) == read


def test_a_line_quoted_in_them_is_a_leak() -> None:
    old = "def allowed(user, token):\n    return verify(user, token)\n"
    new = "def allowed(user, token):\n    if not token: return True\n    return verify(user, token)\n"
    greek = "if not token: return True".translate(str.maketrans("et", "\u03b5\u03c4"))
    small_caps = ("\u026a\ua730 \u0274\u1d0f\u1d1b \u1d1b\u1d0f\u1d0b\u1d07\u0274: "
                  "\u0280\u1d07\u1d1b\u1d1c\u0280\u0274 True")
    for quote in (greek, small_caps):
        assert leak_reason(f"Let them in: {quote}", new, old) == "description quotes the new code: its line 2, verbatim"
