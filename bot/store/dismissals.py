"""The findings and rules a repository's team dismissed (bot/core/dismissals.py decides what a
dismissal covers; this module only reads and writes the rows). A row belongs to its repository
by GitHub's id when the caller knows it (a name can be renamed, transferred or reused), else by
its name: a lookup with an id finds that id's rows and the rows recorded by name only under the
same name; a lookup without an id finds only rows recorded without one."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, or_, select

from bot.core.dismissals import Dismissal, Kind, problem
from bot.store.db import Database
from bot.store.schema import DismissalRow


def _mine(repo_id: int | None, repo: str) -> Any:
    """The rows of one repository (see the module's docstring)."""
    by_name = and_(DismissalRow.repo_id.is_(None), DismissalRow.repo == repo)
    return by_name if repo_id is None else or_(DismissalRow.repo_id == repo_id, by_name)


def _dismissal(row: DismissalRow) -> Dismissal:
    kind: Kind = "finding" if row.kind == "finding" else "rule"
    return Dismissal(row.target, kind, row.path_glob or None, row.by, row.at, row.reason)


class Dismissals:
    """The dismissals table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, repo_id: int | None, repo: str, d: Dismissal) -> bool:
        """Record `d` for the repository; False when it already dismisses the same target in the
        same paths (the first record stays). Raises ValueError for a dismissal out of bounds."""
        if (why := problem(d)) is not None:
            raise ValueError(why)
        glob = d.path_glob or ""
        with self.db.session() as s:
            known = s.scalars(select(DismissalRow.id).where(
                _mine(repo_id, repo), DismissalRow.target == d.target, DismissalRow.path_glob == glob)).first()
            if known is not None:
                return False
            s.add(DismissalRow(repo_id=repo_id, repo=repo, target=d.target, kind=d.kind, path_glob=glob,
                               by=d.by, at=d.at, reason=d.reason))
        return True

    def remove(self, repo_id: int | None, repo: str, target: str, path_glob: str | None = None) -> int:
        """Forget the repository's dismissals of `target` in `path_glob` (None: in any paths);
        how many."""
        where = [_mine(repo_id, repo), DismissalRow.target == target]
        if path_glob is not None:
            where.append(DismissalRow.path_glob == path_glob)
        with self.db.session() as s:
            return int(s.execute(delete(DismissalRow).where(*where)).rowcount or 0)  # type: ignore[attr-defined]

    def listed(self, repo_id: int | None, repo: str) -> list[Dismissal]:
        """The repository's dismissals, oldest first."""
        with self.db.session() as s:
            rows = s.scalars(select(DismissalRow).where(_mine(repo_id, repo))
                             .order_by(DismissalRow.at, DismissalRow.id))
            return [_dismissal(r) for r in rows]

    def rows(self, repo: str | None = None) -> list[tuple[str, Dismissal]]:
        """(repository, dismissal) of every repository, or of those recorded under the name
        `repo` (`rtcbot stats`, the operator's view); by repository, oldest first."""
        with self.db.session() as s:
            q = select(DismissalRow).order_by(DismissalRow.repo, DismissalRow.at, DismissalRow.id)
            if repo is not None:
                q = q.where(DismissalRow.repo == repo)
            return [(r.repo, _dismissal(r)) for r in s.scalars(q)]

    def counts(self) -> list[tuple[str, int]]:
        """(repository, dismissals) for every repository that has any, most first."""
        with self.db.session() as s:
            rows = list(s.scalars(select(DismissalRow)))
        out: dict[str, int] = {}
        for r in rows:
            out[r.repo] = out.get(r.repo, 0) + 1
        return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))
