"""LLM use per installation and UTC day (bot/store/usage.py) on SQLite and on PostgreSQL: added
up, per installation; nothing written for nothing used."""

from __future__ import annotations

from bot.store.store import Store


def test_usage_adds_up_per_installation(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.usage.today(1) == (0, 0)
        store.usage.add(1, 3, 100)
        store.usage.add(1, 2, 50, cache_hits=4)
        store.usage.add(2, 1, 10)
        store.usage.add(1, 0, 0)  # nothing used: nothing written
        assert store.usage.today(1) == (5, 150) and store.usage.today(2) == (1, 10)
        assert store.metrics()["llm_cache_hits"] == 4
    finally:
        store.close()


def test_add_counts_reads_then_writes_where_the_dialect_has_no_upsert(db_url: str) -> None:
    """The path of a dialect without INSERT … ON CONFLICT, taken on purpose (no statement): the
    same sums as the upsert's."""
    from bot.store.schema import LLMFailureRow
    from bot.store.usage import add_counts

    store = Store(db_url)
    try:
        add_counts(store.db, [(None, LLMFailureRow, ("timeout",), {"reason": "timeout", "requests": 2})], ("requests",))
        add_counts(store.db, [(None, LLMFailureRow, ("timeout",), {"reason": "timeout", "requests": 3}),
                              (None, LLMFailureRow, ("connection",), {"reason": "connection", "requests": 1})],
                   ("requests",))
        store.llm_failures.add({"timeout": 1})  # and the upsert on top of what the fallback wrote
        assert sorted(store.llm_failures.totals()) == [("connection", 1), ("timeout", 6)]
    finally:
        store.close()
