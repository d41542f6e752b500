"""Look-alikes that Unicode's confusables (TR39) leave out, read as the ASCII letter a reader
sees (analyzers/rtc/visible_text.py adds them to TR39's table). Data; its test
(tests/analyzers/rtc/test_extra_look_alikes.py) holds that every entry is one TR39 lacks, that
each maps to one ASCII letter, and that a line written in them reads as the line.

TR39 pairs a character with a Latin one only where the two are drawn alike in its reference
font; a reader of a description is less strict. Greek small letters read as the Latin letter
they resemble (`ε` as e, `τ` as t); small capitals, and the Cyrillic letters drawn as small
capitals, read as their letter (`ʀᴇᴛᴜʀɴ` as return; case is a reader's guess, so lower case).
"""

from __future__ import annotations

EXTRA_LOOK_ALIKES: dict[str, str] = {
    # Greek small letters (α, γ, ι, ν, ο, ρ, σ, υ are in TR39 already)
    "\u03b2": "B",  # β beta
    "\u03b4": "d",  # δ delta
    "\u03b5": "e",  # ε epsilon
    "\u03b7": "n",  # η eta
    "\u03ba": "k",  # κ kappa
    "\u03bc": "u",  # μ mu
    "\u03c0": "n",  # π pi
    "\u03c2": "c",  # ς final sigma
    "\u03c4": "t",  # τ tau
    "\u03c7": "x",  # χ chi
    "\u03c9": "w",  # ω omega
    # Latin letter small capitals (ᴄ, ᴏ, ᴜ, ᴠ, ᴡ, ᴢ, ʏ, ɪ, ꜱ are in TR39 already)
    "\u1d00": "a",  # ᴀ
    "\u0299": "b",  # ʙ
    "\u1d05": "d",  # ᴅ
    "\u1d07": "e",  # ᴇ
    "\ua730": "f",  # ꜰ
    "\u0262": "g",  # ɢ
    "\u029c": "h",  # ʜ
    "\u1d0a": "j",  # ᴊ
    "\u1d0b": "k",  # ᴋ
    "\u029f": "l",  # ʟ
    "\u1d0d": "m",  # ᴍ
    "\u0274": "n",  # ɴ
    "\u1d18": "p",  # ᴘ
    "\ua7af": "q",  # ꞯ
    "\u0280": "r",  # ʀ
    "\u1d1b": "t",  # ᴛ
    # Cyrillic small letters drawn as small capitals, or as a Latin letter
    "\u0432": "b",  # в
    "\u043a": "k",  # к
    "\u043c": "m",  # м
    "\u043d": "h",  # н
    "\u0442": "t",  # т
    "\u0454": "e",  # є
    # other Latin letters
    "\u0237": "j",  # ȷ dotless j
}
