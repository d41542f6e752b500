"""A record of what people did with what rtcbot published, and acceptance rates from it.

Every committable suggestion the pr-review reporter posts is recorded (store table
`published`, keyed by repository, pull request and the marker its comment carries). What
became of it is read from GitHub's own signals, never asked of anyone:

- **applied**: at a later head the flagged lines are gone and the suggested lines are there,
  and the suggested lines were not in the file at the head the suggestion was posted on (both
  recorded when it is posted: `original`, `preexisting`); an unrelated push, or lines that were
  there all along, never count (a `synchronize` re-reads the files of the suggestions still
  pending; `applied` is pure). Rows recorded before this rule lack what it needs: never applied;
- **resolved**: its review thread was resolved (`pull_request_review_thread` events);
- **reactions**: 👍 / 👎 on the bot's comment, read once when the pull request closes, one per
  person (GitHub's list of a comment's reactions, not its counts: 40 👍 from one user are one);
- **merged**: whether the pull request was merged.

Only comments this App made count (`own`: its bot user, bot/github `AppIdentity`): another
bot's or App's comment carrying rtcbot's marker is neither resolved nor reacted to for it.

`acceptance` turns the rows into rates by analyzer, by Patched RTC outcome and by CRScore band,
with Wilson score intervals: the live version of Patched RTC's table ("are RTC-pass fixes taken
more often than RTC-fail ones?"). A repository that sets `feedback: off` is not recorded.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update

from analyzers.intervals import wilson
from bot.store.store import PublishedRow, Store
from reporters.pr_review import by_a_bot as by_a_bot  # a person's markers never count

log = logging.getLogger(__name__)
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


# ------------------------------------------------------------------------------ pure
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


# ------------------------------------------------------------------------------ the store
def record(store: Store, installation_id: int | None, repo: str, pr_number: int, head_sha: str,
           items: Sequence[Item], file_text: Callable[[str], str | None] | None = None) -> int:
    """Record published items (one row per marker: a re-post changes nothing); how many are new.
    `file_text(path)` reads a file at `head_sha`, the head they were posted on: each suggestion
    keeps the lines it flags there and whether its suggested lines were there already (without
    it, or when the file cannot be read, neither is known and the suggestion never counts as
    applied)."""
    texts: dict[str, str | None] = {}

    def at_head(path: str) -> str | None:
        if file_text is not None and path not in texts:
            try:
                texts[path] = file_text(path)
            except Exception as e:  # recorded all the same, as never to count applied
                log.warning("could not read %s at %s for the record of %s#%s: %s: %s", path, head_sha[:12], repo,
                            pr_number, type(e).__name__, e)
                texts[path] = None
        return texts.get(path)

    def known_keys(s: Any) -> set[str]:
        return set(s.scalars(select(PublishedRow.key).where(PublishedRow.repo == repo,
                                                            PublishedRow.pr_number == pr_number)))

    # the files are read from GitHub before the write session, never while it holds the database
    with store.session() as s:
        seen = known_keys(s)
    for it in items:
        if it.kind == "suggestion" and it.key not in seen:
            at_head(it.path)
    new = 0
    with store.session() as s:
        known = known_keys(s)
        for it in items:
            if it.key in known:
                continue
            text = texts.get(it.path) if it.kind == "suggestion" else None
            original = flagged_lines(text, it.start_line, it.end_line)
            s.add(PublishedRow(installation_id=installation_id, repo=repo, pr_number=pr_number, head_sha=head_sha,
                               analyzer=it.analyzer, kind=it.kind, key=it.key, path=it.path,
                               start_line=it.start_line, end_line=it.end_line, replacement=it.replacement,
                               rtc=it.rtc, band=it.band, created_at=time.time(), original=original,
                               preexisting=None if original is None else holds(it.replacement, text)))
            known.add(it.key)
            new += 1
    return new


def rows(store: Store, repo: str | None = None, pr_number: int | None = None) -> list[PublishedRow]:
    with store.session() as s:
        q = select(PublishedRow).order_by(PublishedRow.id)
        if repo is not None:
            q = q.where(PublishedRow.repo == repo)
        if pr_number is not None:
            q = q.where(PublishedRow.pr_number == pr_number)
        return list(s.scalars(q))


def check_applied(store: Store, repo: str, pr_number: int, file_text: Callable[[str], str | None]) -> int:
    """Mark the pending suggestions of a pull request that a later head shows taken (`applied`);
    `file_text(path)` reads a file at that head. How many were marked."""
    pending = [r for r in rows(store, repo, pr_number) if r.kind == "suggestion" and r.applied_at is None
               and r.preexisting is False and r.original]
    texts: dict[str, str | None] = {}
    done = []
    for r in pending:
        if r.path not in texts:
            texts[r.path] = file_text(r.path)
        if applied(r.original, r.replacement, r.preexisting, texts[r.path], near=r.start_line):
            done.append(r.id)
    if done:
        with store.session() as s:
            s.execute(update(PublishedRow).where(PublishedRow.id.in_(done)).values(applied_at=time.time()))
    return len(done)


def mark_resolved(store: Store, repo: str, pr_number: int, keys: Sequence[str], resolved: bool) -> int:
    if not keys:
        return 0
    with store.session() as s:
        res = s.execute(update(PublishedRow).where(PublishedRow.repo == repo, PublishedRow.pr_number == pr_number,
                                                   PublishedRow.key.in_(list(keys))).values(resolved=resolved))
        return int(res.rowcount or 0)  # type: ignore[attr-defined]


def mark_closed(store: Store, repo: str, pr_number: int, merged: bool, comments: Sequence[Mapping[str, Any]],
                own: Callable[[Mapping[str, Any]], bool],
                reactions_of: Callable[[int], Sequence[Mapping[str, Any]]]) -> int:
    """The pull request closed: merged or not, and the reactions on this App's comments
    (`comments`: the review comments as GitHub lists them; `own(c)`: this App wrote c;
    `reactions_of(id)`: a comment's reactions as GitHub lists them), one per person."""
    recorded = {r.key for r in rows(store, repo, pr_number)}
    reactions: dict[str, tuple[int, int]] = {}
    for c in comments:
        keys = [k for k in keys_in([c.get("body")]) if k in recorded]
        if not keys or not isinstance(c.get("id"), int) or not own(c):
            continue
        counted = people(reactions_of(int(c["id"])))
        for key in keys:
            reactions[key] = counted
    n = 0
    with store.session() as s:
        for row in s.scalars(select(PublishedRow).where(PublishedRow.repo == repo,
                                                        PublishedRow.pr_number == pr_number)):
            row.merged = merged
            if row.key in reactions:
                row.thumbs_up, row.thumbs_down = reactions[row.key]
            n += 1
    return n
