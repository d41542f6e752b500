"""`rtcbot qualify --database`'s verdicts, one row per model and repository each time it runs;
the App reads the latest per (repository, model) under `require_qualified: true`
(bot/core/qualification.py)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from bot.store.db import Database
from bot.store.schema import QualificationRow, RepositoryRow


class Qualifications:
    """The qualifications table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, repo: str, model: str, qualified: bool, figures: dict[str, Any], *,
             base_url: str | None = None, at: float | None = None) -> int:
        with self.db.session() as s:
            held = s.execute(select(RepositoryRow.id, RepositoryRow.installation_id)  # its ids, when the App knows them
                             .where(RepositoryRow.full_name == repo, RepositoryRow.removed_at.is_(None))
                             .order_by(RepositoryRow.named_at.desc()).limit(1)).first()
            row = QualificationRow(repo=repo, model=model, base_url=base_url, qualified=qualified,
                                   figures=figures, created_at=time.time() if at is None else at,
                                   repository_id=held[0] if held else None, installation_id=held[1] if held else None)
            s.add(row)
            s.flush()
            return row.id

    def latest(self, repo: str, model: str) -> QualificationRow | None:
        """The newest record of `model` on `repo` (None: never qualified there)."""
        with self.db.session() as s:
            return s.scalars(select(QualificationRow)
                             .where(QualificationRow.repo == repo, QualificationRow.model == model)
                             .order_by(QualificationRow.created_at.desc(), QualificationRow.id.desc())
                             .limit(1)).first()

    def recorded(self, repo: str) -> bool:
        """Whether any model was qualified (or failed to be) for `repo`."""
        with self.db.session() as s:
            found = s.scalars(select(QualificationRow.id).where(QualificationRow.repo == repo).limit(1)).first()
            return found is not None
