"""The store's LLM cache on SQLite and on PostgreSQL: written behind, never lost on flush or close."""

from __future__ import annotations

import time
from pathlib import Path

from bot.store.store import Store, StoreCache
from tests.bot.conftest import Backend


def _url(backend: Backend, tmp_path: Path) -> str:
    return backend.database_url or f"sqlite:///{tmp_path / 'rtcbot.sqlite3'}"


def test_cached_answers_are_seen_at_once_and_stored_by_flush(backend: Backend, tmp_path: Path) -> None:
    store = Store(_url(backend, tmp_path))
    cache = StoreCache(store, 1)
    cache.put("k1", "first answer")
    cache.put("k2", "")  # an empty completion is an answer too
    assert cache.get("k1") == "first answer" and cache.get("k2") == ""  # before any write
    store.cache_flush()
    other = Store(_url(backend, tmp_path), create=False)  # another process's view
    assert StoreCache(other, 1).get("k1") == "first answer" and StoreCache(other, 1).get("k2") == ""
    cache.put("k1", "second answer")
    store.cache_flush()
    assert StoreCache(other, 1).get("k1") == "second answer"
    assert StoreCache(other, 1).get("missing") is None
    other.close()
    store.close()


def test_close_writes_what_is_buffered(backend: Backend, tmp_path: Path) -> None:
    store = Store(_url(backend, tmp_path))
    for i in range(50):
        StoreCache(store, 1).put(f"key-{i}", f"answer {i}")
    store.close()
    again = Store(_url(backend, tmp_path))
    assert again.cache_size() == 50 and StoreCache(again, 1).get("key-49") == "answer 49"
    again.close()


def test_the_writer_thread_stores_answers_without_a_flush(backend: Backend, tmp_path: Path) -> None:
    store = Store(_url(backend, tmp_path))
    other = Store(_url(backend, tmp_path), create=False)
    StoreCache(store, 1).put("late", "answer")
    deadline = time.monotonic() + 10
    while StoreCache(other, 1).get("late") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert StoreCache(other, 1).get("late") == "answer"
    other.close()
    store.close()


def test_two_sweeps_that_saw_the_same_stale_attempt_requeue_it_once(backend: Backend, tmp_path: Path) -> None:
    """Both workers' sweeps read attempt 1 as stale; one requeues it and attempt 2 starts; the
    other's requeue must not put attempt 2 back (it would run a third time beside it)."""
    store = Store(_url(backend, tmp_path))
    job_id = store.add_job({"kind": "analyze", "repo": "o/r", "head_sha": "b" * 40, "analyzer": "editing_rtc",
                            "pr_number": 1})
    assert job_id is not None
    first = store.start_job(job_id)
    assert first is not None
    seen = first.attempts  # what both sweeps read
    assert store.requeue(job_id, expect="running", attempts=seen)
    second = store.start_job(job_id)
    assert second is not None and second.attempts == seen + 1
    assert not store.requeue(job_id, expect="running", attempts=seen)
    row = store.job(job_id)
    assert row is not None and (row.status, row.attempts) == ("running", seen + 1)
    store.close()


def test_an_attempt_the_sweep_replaced_cannot_overwrite_the_next_ones_end(backend: Backend, tmp_path: Path) -> None:
    store = Store(_url(backend, tmp_path))
    job_id = store.add_job({"kind": "analyze", "repo": "o/r", "head_sha": "a" * 40, "analyzer": "editing_rtc",
                            "pr_number": 1})
    assert job_id is not None
    first = store.start_job(job_id)
    assert first is not None and first.attempts == 1
    assert store.requeue(job_id, expect="running")  # the sweep thought its worker dead
    second = store.start_job(job_id)
    assert second is not None and second.attempts == 2
    assert store.finish_job(job_id, "done", "from the first attempt", attempt=1) is False
    assert store.job_status(job_id) == "running"  # the second attempt still owns it
    assert store.finish_job(job_id, "skipped", "from the second attempt", attempt=2) is True
    row = store.job(job_id)
    assert row is not None and (row.status, row.result) == ("skipped", "from the second attempt")
    store.close()
