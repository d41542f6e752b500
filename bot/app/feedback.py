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

The rules are pure (bot/core/feedback.py); this module feeds them what GitHub shows and
keeps the rows (the store's `published` repository). `acceptance` (bot/core/feedback.py) turns
the rows into rates with Wilson score intervals: the live version of Patched RTC's table ("are
RTC-pass fixes taken more often than RTC-fail ones?"). A repository that sets `feedback: off`
is not recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from analyzers.context import HeadFileTooLarge
from bot.app.job_kinds import AnalyzeJob
from bot.core.feedback import Item as Item
from bot.core.feedback import applied, flagged_lines, holds, people
from bot.core.feedback import keys_in as keys_in
from bot.store.store import Store
from reporters.pr_review import by_a_bot as by_a_bot  # a person's markers never count

log = logging.getLogger(__name__)


def record(store: Store, installation_id: int | None, repo: str, pr_number: int, head_sha: str,
           items: Sequence[Item], file_text: Callable[[str], str | None] | None = None, *,
           repository_id: int | None = None) -> int:
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

    # the files are read from GitHub before the write, never while it holds the database
    seen = store.published.keys(repo, pr_number)
    for it in items:
        if it.kind == "suggestion" and it.key not in seen:
            at_head(it.path)
    rows = []
    for it in items:
        text = texts.get(it.path) if it.kind == "suggestion" else None
        original = flagged_lines(text, it.start_line, it.end_line)
        rows.append({"installation_id": installation_id, "repository_id": repository_id, "head_sha": head_sha,
                     "analyzer": it.analyzer, "kind": it.kind, "key": it.key, "path": it.path,
                     "start_line": it.start_line,
                     "end_line": it.end_line, "replacement": it.replacement, "rtc": it.rtc, "band": it.band,
                     "original": original,
                     "preexisting": None if original is None else holds(it.replacement, text)})
    return store.published.add(repo, pr_number, rows)


def check_applied(store: Store, repo: str, pr_number: int, file_text: Callable[[str], str | None]) -> int:
    """Mark the pending suggestions of a pull request that a later head shows taken (`applied`);
    `file_text(path)` reads a file at that head (one too large to read holds none applied). How
    many were marked."""
    pending = [r for r in store.published.rows(repo, pr_number) if r.kind == "suggestion" and r.applied_at is None
               and r.preexisting is False and r.original]
    texts: dict[str, str | None] = {}
    done = []
    for r in pending:
        if r.path not in texts:
            try:
                texts[r.path] = file_text(r.path)
            except HeadFileTooLarge:
                texts[r.path] = None
        if applied(r.original, r.replacement, r.preexisting, texts[r.path], near=r.start_line):
            done.append(r.id)
    store.published.mark_applied(done)
    return len(done)


def mark_closed(store: Store, repo: str, pr_number: int, merged: bool, comments: Sequence[Mapping[str, Any]],
                own: Callable[[Mapping[str, Any]], bool],
                reactions_of: Callable[[int], Sequence[Mapping[str, Any]]]) -> int:
    """The pull request closed: merged or not, and the reactions on this App's comments
    (`comments`: the review comments as GitHub lists them; `own(c)`: this App wrote c;
    `reactions_of(id)`: a comment's reactions as GitHub lists them), one per person."""
    recorded = store.published.keys(repo, pr_number)
    reactions: dict[str, tuple[int, int]] = {}
    for c in comments:
        keys = [k for k in keys_in([c.get("body")]) if k in recorded]
        if not keys or not isinstance(c.get("id"), int) or not own(c):
            continue
        counted = people(reactions_of(int(c["id"])))
        for key in keys:
            reactions[key] = counted
    return store.published.mark_closed(repo, pr_number, merged, reactions)


def recorder(store: Store, job: AnalyzeJob, head_file: Callable[[str], str | None]
             ) -> Callable[[list[dict[str, Any]]], int]:
    """Records what a reporter published on the job's pull request, with the flagged lines read
    at the head it was posted on (`head_file`)."""
    def record_items(items: list[dict[str, Any]]) -> int:
        return record(store, job.installation_id, job.repo, job.pr_number or 0, job.head_sha,
                      [Item(**i) for i in items], head_file, repository_id=job.repository_id)

    return record_items
