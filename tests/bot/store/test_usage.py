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
