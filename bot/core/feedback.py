"""What people did with what rtcbot published, as pure rules: the markers in comments, whether a
later head shows a suggestion applied, reactions counted one per person, and acceptance rates
with Wilson score intervals (by analyzer, by Patched RTC outcome, by CRScore band). The App
records the rows (bot/app/feedback.py, the store's `published` table); `rtcbot stats` and the
App's /feedback read them through `acceptance`.

- **applied**: at a later head the flagged lines are gone and the suggested lines are there,
  and the suggested lines were not in the file at the head the suggestion was posted on (both
  recorded when it is posted: `original`, `preexisting`); an unrelated push, or lines that were
  there all along, never count. Rows recorded before this rule lack what it needs: never applied;
- **reactions**: 👍 / 👎 on the bot's comment, one per person (`people`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzers.intervals import wilson

MARKER_RE = re.compile(r"<!-- rtcbot:suggestion:([0-9a-f]{8,64}) -->")


@dataclass(frozen=True)
class Item:
    """One thing a reporter published (reporters/pr_review.py `published()`)."""

    analyzer: str
    kind: str  # suggestion | comment
    key: str
    path: str
    start_line: int
    end_line: int
    replacement: str = ""
    rtc: str | None = None  # pass | fail
    band: str | None = None


def keys_in(bodies: Iterable[str | None]) -> list[str]:
    """The markers in comment bodies, in order, once each."""
    out: dict[str, None] = {}
    for body in bodies:
        for m in MARKER_RE.finditer(body or ""):
            out[m.group(1)] = None
    return list(out)


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def _run_at(have: Sequence[str], want: Sequence[str], lo: int = 0, hi: int | None = None) -> int | None:
    """Where the run `want` starts in have[lo:hi], or None."""
    hi = len(have) if hi is None else hi
    return next((i for i in range(lo, max(lo, hi - len(want) + 1)) if list(have[i:i + len(want)]) == list(want)),
                None)


def flagged_lines(text: str | None, start_line: int, end_line: int) -> str | None:
    """Lines [start_line, end_line] of `text` (the flagged lines a suggestion replaces), or None
    when the file or the lines are not there."""
    if text is None or start_line < 1 or end_line < start_line:
        return None
    have = text.splitlines()
    if end_line > len(have):
        return None
    return "\n".join(have[start_line - 1:end_line]) + "\n"


def holds(replacement: str, text: str | None) -> bool:
    """Whether `text` holds the suggested lines as a run anywhere (blank-only suggestions: no)."""
    want = _lines(replacement)
    if text is None or not want or not any(w.strip() for w in want):
        return False
    return _run_at(_lines(text), want) is not None


def applied(original: str | None, replacement: str, preexisting: bool | None, text: str | None,
            near: int, window: int = 200) -> bool:
    """Whether a later head's `text` shows the suggestion taken: the suggested lines are there
    near line `near` (`is_applied`) and the flagged lines `original` are gone from there (read
    with that run of suggested lines taken out, so a fix that keeps a flagged line still counts),
    and the suggested lines were not in the file when it was posted (`preexisting` False).
    Unknown (None) posted-head facts never count."""
    want, old = _lines(replacement), _lines(original or "")
    if preexisting is not False or not any(o.strip() for o in old) or text is None or want == old:
        return False
    if not is_applied(replacement, text, near, window):
        return False
    have = _lines(text)
    lo, hi = max(0, near - 1 - window), min(len(have), near - 1 + window + len(want))
    at = _run_at(have, want, lo, hi)
    assert at is not None  # is_applied found it in the same window
    rest = have[:at] + have[at + len(want):]
    return _run_at(rest, old, lo, min(len(rest), hi + len(old))) is None


def people(reactions: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(👍, 👎) from a comment's listed reactions, one per person (by user id, else login);
    a reaction without a user (a deleted account) does not count."""
    up: set[object] = set()
    down: set[object] = set()
    for r in reactions:
        user = r.get("user")
        who = (user.get("id") or user.get("login")) if isinstance(user, Mapping) else None
        if who is None:
            continue
        if r.get("content") == "+1":
            up.add(who)
        elif r.get("content") == "-1":
            down.add(who)
    return len(up), len(down)


def is_applied(replacement: str, text: str | None, near: int | None = None, window: int = 200) -> bool:
    """Whether `text` (a file at a later head) holds the suggested lines as a run — near line
    `near` when given (a push may move them by a few lines, not to another function)."""
    want = _lines(replacement)
    if text is None or not want or not any(w.strip() for w in want):
        return False
    have = _lines(text)
    lo, hi = 0, len(have)
    if near is not None:
        lo, hi = max(0, near - 1 - window), min(len(have), near - 1 + window + len(want))
    return any(have[i:i + len(want)] == want for i in range(lo, max(lo, hi - len(want) + 1)))


def _rate(rows: Sequence[Any], took: Callable[[Any], bool]) -> dict[str, Any]:
    n, k = len(rows), sum(1 for r in rows if took(r))
    interval = wilson(k, n)
    return {"n": n, "accepted": k, "rate": round(k / n, 4) if n else None,
            "interval": list(interval) if interval else None}


def accepted(row: Any) -> bool:
    """Taken: applied by a push (the only signal that the code changed because of it)."""
    return row.applied_at is not None


def acceptance(rows: Sequence[Any]) -> dict[str, Any]:
    """Acceptance rates with 95% Wilson intervals: overall, by analyzer, by Patched RTC
    outcome, by CRScore band; plus the other signals, as counts."""
    def by(attr: str) -> dict[str, Any]:
        groups: dict[str, list[Any]] = {}
        for r in rows:
            value = getattr(r, attr)
            if value is not None:
                groups.setdefault(str(value), []).append(r)
        return {k: _rate(v, accepted) for k, v in sorted(groups.items())}

    return {
        "published": len(rows),
        "overall": _rate(rows, accepted),
        "by_analyzer": by("analyzer"),
        "by_rtc": by("rtc"),
        "by_band": by("band"),
        "resolved": sum(1 for r in rows if r.resolved),
        "thumbs_up": sum(r.thumbs_up for r in rows),
        "thumbs_down": sum(r.thumbs_down for r in rows),
        "merged_prs": len({(r.repo, r.pr_number) for r in rows if r.merged}),
    }
