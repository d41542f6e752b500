"""The dashboard's sign-in sessions, held on the server: the browser's cookie carries a random
id only (bot/app/dashboard/sessions.py), and this table a keyed hash of that id with what the
session knows (the login, the repositories it may see, its CSRF token, the OAuth state) and
when it ends. A session the store no longer holds, or whose end has passed, is no session:
signing out deletes the row, and expired rows are dropped by `prune` (the sweep, and every
sign-in). Callers hand in the hash, never the id itself, so the table holds nothing a browser
could present."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete

from bot.store.db import Database
from bot.store.schema import DashboardSessionRow


class Sessions:
    """The dashboard_sessions table, by the hash of a session's id."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, id_hash: str, *, now: float | None = None) -> DashboardSessionRow | None:
        """The session, or None: never made, ended, or expired (an expired row reads as gone
        before the sweep drops it)."""
        with self.db.session() as s:
            row = s.get(DashboardSessionRow, id_hash)
        if row is None or row.expires_at <= (time.time() if now is None else now):
            return None
        return row

    def put(self, id_hash: str, data: dict[str, Any], *, created_at: float, expires_at: float) -> None:
        """Make the session, or replace what it knows and when it ends."""
        with self.db.session() as s:
            row = s.get(DashboardSessionRow, id_hash) or DashboardSessionRow(id_hash=id_hash)
            row.data, row.created_at, row.expires_at = data, created_at, expires_at
            s.add(row)

    def end(self, id_hash: str) -> bool:
        """End the session (signing out); whether there was one."""
        with self.db.writing() as c:
            res = c.execute(delete(DashboardSessionRow).where(DashboardSessionRow.id_hash == id_hash))
            return bool(res.rowcount)

    def prune(self, *, now: float | None = None) -> int:
        """Drop the sessions whose end has passed; how many."""
        cutoff = time.time() if now is None else now
        with self.db.writing() as c:
            res = c.execute(delete(DashboardSessionRow).where(DashboardSessionRow.expires_at <= cutoff))
            return int(res.rowcount or 0)
