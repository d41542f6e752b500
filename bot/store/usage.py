"""The LLM requests and tokens each installation's jobs used per UTC day (its daily budget),
and the cache hits (for /metrics only, never public)."""

from __future__ import annotations

from sqlalchemy import select

from bot.store.db import Database
from bot.store.schema import Base, LLMUsageRow, utc_day

USAGE = Base.metadata.tables[LLMUsageRow.__tablename__]


class Usage:
    """The llm_usage_daily table."""

    def __init__(self, db: Database) -> None:
        self.db = db
        stmt = db.upsert(USAGE)
        # INSERT … ON CONFLICT (installation, day) DO UPDATE adding to the counts
        self._upsert = None if stmt is None else stmt.on_conflict_do_update(
            index_elements=["installation_id", "day"], set_={
                "requests": USAGE.c.requests + stmt.excluded.requests, "tokens": USAGE.c.tokens + stmt.excluded.tokens,
                "cache_hits": USAGE.c.cache_hits + stmt.excluded.cache_hits})

    def today(self, installation_id: int) -> tuple[int, int]:
        """(requests, tokens) this installation's jobs used today (UTC)."""
        with self.db.reading() as c:
            row = c.execute(select(LLMUsageRow.requests, LLMUsageRow.tokens).where(
                LLMUsageRow.installation_id == installation_id, LLMUsageRow.day == utc_day())).first()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def add(self, installation_id: int, requests: int, tokens: int, cache_hits: int = 0) -> None:
        if requests <= 0 and tokens <= 0 and cache_hits <= 0:
            return
        values = {"installation_id": installation_id, "day": utc_day(), "requests": requests, "tokens": tokens,
                  "cache_hits": cache_hits}
        if self._upsert is not None:
            with self.db.writing() as c:
                c.execute(self._upsert, values)
            return
        with self.db.session() as s:  # other dialects: read, then write
            row = s.get(LLMUsageRow, (installation_id, values["day"]))
            if row is None:
                s.add(LLMUsageRow(**values))
            else:
                row.requests += requests
                row.tokens += tokens
                row.cache_hits += cache_hits
