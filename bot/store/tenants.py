"""Installations of the App: the account each belongs to and whether it is active. A tenant's
data is found by GitHub's ids, never by a name that can be renamed or reused."""

from __future__ import annotations

import time

from bot.store.db import Database
from bot.store.schema import Installation


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
