"""Installations of the App (the account each belongs to and whether it is active) and the
repositories it has seen. A tenant's data is found by GitHub's ids, never by a name that can be
renamed, transferred or reused: every row holding a tenant's data carries its repository's id
and installation's id; its name is kept current (a rename moves the rows), a name another id
took is retired on the old rows, and a removed repository is no longer served, then deleted
after the retention."""

from __future__ import annotations

import logging
import time
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from bot.store.db import Database
from bot.store.schema import (
    ACTIVE,
    Base,
    CheckRunRow,
    FindingRow,
    Installation,
    JobRow,
    PublishedRow,
    QualificationRow,
    RepositoryRow,
)


class Installations:
    """The installations table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, installation_id: int, account: str, active: bool) -> None:
        with self.db.session() as s:
            row = s.get(Installation, installation_id) or Installation(id=installation_id)
            row.account, row.active, row.updated_at = account, active, time.time()
            s.add(row)

    def get(self, installation_id: int) -> Installation | None:
        with self.db.session() as s:
            return s.get(Installation, installation_id)

log = logging.getLogger(__name__)


def retired(name: str, repository_id: int | None) -> str:
    """The name kept on the rows of a repository that no longer holds `name` (another took it,
    or it was removed): never a name GitHub gives ('#' is not allowed in one), unique per id."""
    return f"{name}#{repository_id if repository_id is not None else '?'}"


REPOSITORIES = Base.metadata.tables[RepositoryRow.__tablename__]
TENANT_ROWS = (JobRow, CheckRunRow, PublishedRow, QualificationRow)  # rows holding a tenant's data


def _rename(s: Session, repository_id: int, name: str) -> None:
    """Every row of the repository under `name` (its data follows its id)."""
    for table in TENANT_ROWS:
        s.execute(update(table).where(table.repository_id == repository_id).values(repo=name))


def _retire(s: Session, name: str, keep: int, at: float) -> None:
    """`name` now belongs to repository `keep`: the rows of any other id that held it move to a
    retired name, and so do rows whose repository is not known (made before rtcbot kept ids)
    when another id held the name; other repositories holding it are no longer served (another
    id took the name: they were renamed, transferred or deleted; a later delivery for one names
    it again)."""
    held = s.scalar(select(RepositoryRow.id).where(RepositoryRow.full_name == name, RepositoryRow.id != keep)
                    .limit(1)) is not None
    for table in TENANT_ROWS:
        for rid in list(s.scalars(select(table.repository_id).where(table.repo == name).distinct())):
            if rid == keep or (rid is None and not held):
                continue
            which = table.repository_id.is_(None) if rid is None else table.repository_id == rid
            s.execute(update(table).where(table.repo == name, which).values(repo=retired(name, rid)))
    s.execute(update(RepositoryRow).where(RepositoryRow.full_name == name, RepositoryRow.id != keep,
                                          RepositoryRow.removed_at.is_(None)).values(removed_at=at))


class Repositories:
    """The repositories table, and the rule that a tenant's rows follow its repository's id:
    a repository renamed or transferred takes its rows to its new name; a name another id held
    starts empty for the new one; a removed repository is no longer served."""

    def __init__(self, db: Database) -> None:
        self.db = db
        stmt, row = db.insert_on_conflict(REPOSITORIES), REPOSITORIES.c
        new = stmt.excluded
        # INSERT … ON CONFLICT (id) DO UPDATE … WHERE: a row back when the naming changed anything
        self._seen = stmt.on_conflict_do_update(
            index_elements=["id"], set_={c: new[c] for c in ("installation_id", "full_name", "named_at", "removed_at")},
            where=(row.named_at <= new.named_at) & or_(row.full_name != new.full_name,
                                                      row.installation_id != new.installation_id,
                                                      row.removed_at.is_not(None)),
        ).returning(row.id)
        # an older delivery never names it again, nor removes it twice
        self._removed = stmt.on_conflict_do_update(
            index_elements=["id"], set_={"named_at": new.named_at, "removed_at": new.removed_at},
            where=(row.named_at <= new.named_at) & row.removed_at.is_(None))

    def seen(self, repository_id: int, installation_id: int, full_name: str, at: float) -> bool:
        """A delivery made at `at` names the repository `full_name` under the installation (and
        so it is there); whether anything changed. An older delivery than the one that last
        named it changes nothing (a job queued before a rename runs after it). One statement
        inserts or updates the row, so two workers that name a new repository at once both
        succeed: the second finds the first's row (and, the same naming, changes nothing)."""
        with self.db.session() as s:
            if s.execute(self._seen, _row(repository_id, installation_id, full_name, at, None)).first() is None:
                return False
            _retire(s, full_name, repository_id, at)
            _rename(s, repository_id, full_name)
        return True

    def removed(self, repository_id: int, installation_id: int, full_name: str, at: float) -> None:
        """The repository was deleted or removed from the installation: no longer served; its rows
        are deleted after the retention (`expired`, `forget`). An older delivery than the one that
        last named it changes nothing; a repository not seen before is recorded removed."""
        with self.db.session() as s:
            s.execute(self._removed, _row(repository_id, installation_id, full_name, at, at))

    def live(self, full_name: str, installation_id: int | None = None) -> int | None:
        """The id of the repository served under `full_name` (under `installation_id` when given),
        or None: not known, removed, or never seen by the App."""
        q = select(RepositoryRow.id).where(RepositoryRow.full_name == full_name, RepositoryRow.removed_at.is_(None))
        if installation_id is not None:
            q = q.where(RepositoryRow.installation_id == installation_id)
        with self.db.session() as s:
            return s.scalar(q.order_by(RepositoryRow.named_at.desc()).limit(1))

    def get(self, repository_id: int) -> RepositoryRow | None:
        with self.db.session() as s:
            return s.get(RepositoryRow, repository_id)

    def served(self) -> list[int]:
        """The ids of every repository served (seen, not removed)."""
        with self.db.session() as s:
            return list(s.scalars(select(RepositoryRow.id).where(RepositoryRow.removed_at.is_(None))))

    def expired(self, older_than_s: float) -> list[RepositoryRow]:
        """The repositories removed over `older_than_s` ago (their rows are due for deletion)."""
        cutoff = time.time() - older_than_s
        with self.db.session() as s:
            return list(s.scalars(select(RepositoryRow).where(RepositoryRow.removed_at <= cutoff)))

    def forget_expired(self, older_than_s: float) -> int:
        """Delete the rows of every repository removed over `older_than_s` ago; how many
        repositories."""
        n = 0
        for row in self.expired(older_than_s):
            rows = self.forget(row.id)
            log.info("deleted the data of repository %s (%s, removed %.0f s ago): %d row(s)", row.id, row.full_name,
                     time.time() - (row.removed_at or 0.0), rows)
            n += 1
        return n

    def forget(self, repository_id: int) -> int:
        """Delete a removed repository's rows (findings with their check runs; jobs no longer
        active) and its record; how many rows. A repository named again since is left alone."""
        n = 0
        with self.db.session() as s:
            row = s.get(RepositoryRow, repository_id)
            if row is None or row.removed_at is None:
                return 0
            runs = select(CheckRunRow.id).where(CheckRunRow.repository_id == repository_id)
            n += _count(s.execute(delete(FindingRow).where(FindingRow.check_run_id.in_(runs))))
            for table in TENANT_ROWS:
                where = [table.repository_id == repository_id]
                if table is JobRow:
                    where.append(JobRow.status.not_in(ACTIVE))
                n += _count(s.execute(delete(table).where(*where)))
            s.delete(row)
        return n


def _row(repository_id: int, installation_id: int, full_name: str, at: float,
         removed_at: float | None) -> dict[str, Any]:
    return {"id": repository_id, "installation_id": installation_id, "full_name": full_name, "named_at": at,
            "removed_at": removed_at}


def _count(result: Any) -> int:
    return int(result.rowcount or 0)
