"""The LLM requests and tokens each installation's jobs used per UTC day (its daily budget), and
within it each pull request's and each author's (theirs: `spenders`, bot/app/budget.py), and
the cache hits (for /metrics only, never public)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table, select

from bot.store.db import Database
from bot.store.schema import Base, LLMSpenderUsageRow, LLMUsageRow, utc_day

USAGE = Base.metadata.tables[LLMUsageRow.__tablename__]
SPENDERS = Base.metadata.tables[LLMSpenderUsageRow.__tablename__]


def adding(db: Database, table: Table, keys: list[str], counts: Sequence[str]) -> Any:
    """INSERT … ON CONFLICT (keys) DO UPDATE adding to the counts; None where the dialect has none."""
    stmt = db.upsert(table)
    return None if stmt is None else stmt.on_conflict_do_update(
        index_elements=keys, set_={c: table.c[c] + stmt.excluded[c] for c in counts})


def add_counts(db: Database, rows: Sequence[tuple[Any, type[Any], tuple[Any, ...], dict[str, Any]]],
               counts: Sequence[str]) -> None:
    """Add each row's `counts` to the stored row of its key (made where there is none), in one
    transaction. `rows`: (its `adding` statement, its mapped class, its primary key, its values);
    where the dialect has no upsert (a statement is None), read, then write."""
    if all(upsert is not None for upsert, _, _, _ in rows):
        with db.writing() as c:
            for upsert, _, _, values in rows:
                c.execute(upsert, values)
        return
    with db.session() as s:
        for _, model, key, values in rows:
            row = s.get(model, key)
            if row is None:
                s.add(model(**values))
                continue
            for count in counts:
                if count in values:
                    setattr(row, count, getattr(row, count) + values[count])


class Usage:
    """The llm_usage_daily and llm_usage_spenders tables."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._upsert = adding(db, USAGE, ["installation_id", "day"], ("requests", "tokens", "cache_hits"))
        self._spender_upsert = adding(db, SPENDERS, ["installation_id", "spender", "day"], ("requests", "tokens"))

    def today(self, installation_id: int) -> tuple[int, int]:
        """(requests, tokens) this installation's jobs used today (UTC)."""
        with self.db.reading() as c:
            row = c.execute(select(LLMUsageRow.requests, LLMUsageRow.tokens).where(
                LLMUsageRow.installation_id == installation_id, LLMUsageRow.day == utc_day())).first()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def spent_today(self, installation_id: int, spenders: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(requests, tokens) each of `spenders` (a pull request, an author) used today (UTC) in
        this installation; (0, 0) for one that used nothing."""
        out = dict.fromkeys(spenders, (0, 0))
        if not out:
            return out
        with self.db.reading() as c:
            rows = c.execute(select(LLMSpenderUsageRow.spender, LLMSpenderUsageRow.requests,
                                    LLMSpenderUsageRow.tokens).where(
                LLMSpenderUsageRow.installation_id == installation_id, LLMSpenderUsageRow.day == utc_day(),
                LLMSpenderUsageRow.spender.in_(list(out))))
            out.update({str(r[0]): (int(r[1]), int(r[2])) for r in rows})
        return out

    def add(self, installation_id: int, requests: int, tokens: int, cache_hits: int = 0,
            spenders: Sequence[str] = ()) -> None:
        """Count a job's use to its installation's day and to each of its `spenders`' days, in
        one transaction."""
        if requests <= 0 and tokens <= 0 and cache_hits <= 0:
            return
        day = utc_day()
        values = {"installation_id": installation_id, "day": day, "requests": requests, "tokens": tokens,
                  "cache_hits": cache_hits}
        theirs = [{"installation_id": installation_id, "spender": s, "day": day, "requests": requests,
                   "tokens": tokens} for s in dict.fromkeys(spenders)] if requests > 0 or tokens > 0 else []
        add_counts(self.db, [(self._upsert, LLMUsageRow, (installation_id, day), values),
                             *((self._spender_upsert, LLMSpenderUsageRow, (installation_id, v["spender"], day), v)
                               for v in theirs)], ("requests", "tokens", "cache_hits"))
