"""The workers' failed LLM requests by reason (the llm_request_failures table): each analysis's
failed HTTP attempts (analyzers/llm/client.py `Usage.failures`) added as it ends
(bot/app/budget.py), read by /metrics at scrape time, the workers being other processes
(bot/app/vitals.py). A counter: rows are only added to."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select

from bot.store.db import Database
from bot.store.schema import Base, LLMFailureRow
from bot.store.usage import add_counts, adding

FAILURES = Base.metadata.tables[LLMFailureRow.__tablename__]


class LLMFailures:
    """The llm_request_failures table."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._upsert = adding(db, FAILURES, ["reason"], ("requests",))

    def add(self, counts: Mapping[str, int]) -> None:
        """Add each reason's failed requests (those at 0 write nothing), in one transaction."""
        added = {reason: n for reason, n in sorted(counts.items()) if n > 0}
        if not added:
            return
        add_counts(self.db, [(self._upsert, LLMFailureRow, (reason,), {"reason": reason, "requests": n})
                             for reason, n in added.items()], ("requests",))

    def totals(self) -> list[tuple[str, int]]:
        """(reason, failed requests) of every reason counted so far."""
        with self.db.reading() as c:
            rows = c.execute(select(LLMFailureRow.reason, LLMFailureRow.requests)).all()
        return [(str(r[0]), int(r[1])) for r in rows]
