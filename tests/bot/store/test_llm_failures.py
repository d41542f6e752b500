"""The workers' failed LLM requests by reason (bot/store/llm_failures.py) on SQLite and on
PostgreSQL: added up per reason, by two stores at once as two workers would; nothing written for
reasons at 0."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from bot.store.store import Store


def ten_analyses(store: Store) -> None:
    for _ in range(10):
        store.llm_failures.add({"connection": 1, "status_5xx": 5})


def test_failures_add_up_per_reason(db_url: str) -> None:
    store, other = Store(db_url), Store(db_url)  # two workers' stores on one database
    try:
        assert store.llm_failures.totals() == []
        store.llm_failures.add({"connection": 2, "timeout": 0})
        with ThreadPoolExecutor(max_workers=2) as ex:
            list(ex.map(ten_analyses, (store, other)))
        store.llm_failures.add({})
        assert sorted(other.llm_failures.totals()) == [("connection", 22), ("status_5xx", 100)]
        assert sorted(store.alert_figures()["llm_failures"]) == [("connection", 22), ("status_5xx", 100)]
    finally:
        store.close()
        other.close()
