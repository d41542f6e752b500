"""What rtcbot published that a person can take or leave (a committable suggestion, a comment),
one row per repository, pull request and marker key, and what became of it: applied by a later
push, its review thread resolved, reactions, the pull request merged. The rules that decide
these are pure (bot/core/feedback.py); this module only reads and writes the rows."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot.store.db import Database
from bot.store.schema import PublishedRow, RepositoryRow


def _keys(s: Session, repo: str, pr_number: int) -> set[str]:
    return set(s.scalars(select(PublishedRow.key).where(PublishedRow.repo == repo,
                                                        PublishedRow.pr_number == pr_number)))


class Published:
    """The published table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def keys(self, repo: str, pr_number: int) -> set[str]:
        """The marker keys recorded for a pull request."""
        with self.db.session() as s:
            return _keys(s, repo, pr_number)

    def add(self, repo: str, pr_number: int, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert the rows (column values besides repo and pr_number) whose key the pull request
        has not recorded yet, the first of each key only; how many are new."""
        new = 0
        with self.db.session() as s:
            known = _keys(s, repo, pr_number)
            for values in rows:
                if values["key"] in known:
                    continue
                s.add(PublishedRow(**{"created_at": time.time(), **values, "repo": repo, "pr_number": pr_number}))
                known.add(values["key"])
                new += 1
        return new

    def rows(self, repo: str | None = None, pr_number: int | None = None) -> list[PublishedRow]:
        """Every row, or a repository's, or a pull request's; oldest first."""
        with self.db.session() as s:
            q = select(PublishedRow).order_by(PublishedRow.id)
            if repo is not None:
                q = q.where(PublishedRow.repo == repo)
            if pr_number is not None:
                q = q.where(PublishedRow.pr_number == pr_number)
            return list(s.scalars(q))

    def mark_applied(self, ids: Sequence[int]) -> None:
        if ids:
            with self.db.session() as s:
                s.execute(update(PublishedRow).where(PublishedRow.id.in_(list(ids))).values(applied_at=time.time()))

    def mark_resolved(self, repo: str, pr_number: int, keys: Sequence[str], resolved: bool) -> int:
        """Whether the review threads of these keys are resolved; how many rows changed."""
        if not keys:
            return 0
        with self.db.session() as s:
            res = s.execute(update(PublishedRow).where(PublishedRow.repo == repo, PublishedRow.pr_number == pr_number,
                                                       PublishedRow.key.in_(list(keys))).values(resolved=resolved))
            return int(res.rowcount or 0)  # type: ignore[attr-defined]

    def mark_closed(self, repo: str, pr_number: int, merged: bool, reactions: Mapping[str, tuple[int, int]]) -> int:
        """The pull request closed: merged or not, on every row of it, and (👍, 👎) per key where
        `reactions` has the key; how many rows."""
        n = 0
        with self.db.session() as s:
            for row in s.scalars(select(PublishedRow).where(PublishedRow.repo == repo,
                                                            PublishedRow.pr_number == pr_number)):
                row.merged = merged
                if row.key in reactions:
                    row.thumbs_up, row.thumbs_down = reactions[row.key]
                n += 1
        return n

    def since(self, repository_id: int, installation_id: int, since: float) -> list[tuple[str, float, bool]]:
        """(analyzer, created_at, applied) of the repository's rows (by GitHub's ids) made since
        `since`."""
        with self.db.session() as s:
            return [(a, c, applied is not None) for a, c, applied in s.execute(
                select(PublishedRow.analyzer, PublishedRow.created_at, PublishedRow.applied_at)
                .where(PublishedRow.repository_id == repository_id, PublishedRow.installation_id == installation_id,
                       PublishedRow.created_at >= since))]

    def served(self, repo: str | None = None) -> list[PublishedRow]:
        """The rows of every repository served (seen by the App, not removed, rows made under the
        installation it is in), or of the one served under the name `repo` now; oldest first.
        Rows are joined by GitHub's ids: those whose ids are not known are never among them, and
        a name another repository held shows only the new one's."""
        q = (select(PublishedRow).join(RepositoryRow, (RepositoryRow.id == PublishedRow.repository_id)
                                       & (RepositoryRow.installation_id == PublishedRow.installation_id))
             .where(RepositoryRow.removed_at.is_(None)).order_by(PublishedRow.id))
        if repo is not None:
            q = q.where(RepositoryRow.full_name == repo)
        with self.db.session() as s:
            return list(s.scalars(q))
