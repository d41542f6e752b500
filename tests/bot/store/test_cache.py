"""The store's LLM cache (bot/store/cache.py) on SQLite and on PostgreSQL: written behind, never
lost on flush or close."""

from __future__ import annotations

import time

from bot.store.cache import StoreCache
from bot.store.store import Store


def test_cached_answers_are_seen_at_once_and_stored_by_flush(db_url: str) -> None:
    store = Store(db_url)
    cache = StoreCache(store.cache, 1)
    cache.put("k1", "first answer")
    cache.put("k2", "")  # an empty completion is an answer too
    assert cache.get("k1") == "first answer" and cache.get("k2") == ""  # before any write
    store.cache.flush()
    other = Store(db_url, create=False)  # another process's view
    assert StoreCache(other.cache, 1).get("k1") == "first answer" and StoreCache(other.cache, 1).get("k2") == ""
    cache.put("k1", "second answer")
    store.cache.flush()
    assert StoreCache(other.cache, 1).get("k1") == "second answer"
    assert StoreCache(other.cache, 1).get("missing") is None
    other.close()
    store.close()


def test_close_writes_what_is_buffered(db_url: str) -> None:
    store = Store(db_url)
    for i in range(50):
        StoreCache(store.cache, 1).put(f"key-{i}", f"answer {i}")
    store.close()
    again = Store(db_url)
    assert again.cache.size() == 50 and StoreCache(again.cache, 1).get("key-49") == "answer 49"
    again.close()


def test_the_writer_thread_stores_answers_without_a_flush(db_url: str) -> None:
    store = Store(db_url)
    other = Store(db_url, create=False)
    StoreCache(store.cache, 1).put("late", "answer")
    deadline = time.monotonic() + 10
    while StoreCache(other.cache, 1).get("late") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert StoreCache(other.cache, 1).get("late") == "answer"
    other.close()
    store.close()
