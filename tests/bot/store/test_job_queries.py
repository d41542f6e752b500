"""The reads across jobs (bot/store/job_queries.py) on SQLite and on PostgreSQL: the unsent jobs
and those doing the same work, the stale ones a sweep takes back, the oldest queued, and the
LLM use of a repository's jobs."""

from __future__ import annotations

import time
from typing import Any

from bot.store.store import Store


def _spec(head: str, pr: int = 1, **more: Any) -> dict[str, Any]:
    return {"kind": "analyze", "repo": "o/r", "head_sha": head * 40, "analyzer": "editing_rtc", "pr_number": pr,
            **more}


def test_unsent_jobs_are_found_by_id_and_by_their_work_until_marked_sent(db_url: str) -> None:
    store = Store(db_url)
    try:
        a, b = store.jobs.add(_spec("a")), store.jobs.add(_spec("b"))
        assert a is not None and b is not None
        assert store.job_queries.unsent() == []
        store.jobs.expedite([a, b])
        assert store.job_queries.unsent() == [a, b]
        assert store.job_queries.unsent(limit=1) == [a]
        assert store.job_queries.unsent_like([_spec("b"), _spec("b"), _spec("c")]) == [b]
        store.jobs.mark_sent([a])
        assert store.job_queries.unsent() == [b]
    finally:
        store.close()


def test_stale_running_and_queued_jobs_and_the_oldest_queued(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.job_queries.oldest_queued_at() is None
        before = time.time()
        running, queued = store.jobs.add(_spec("a")), store.jobs.add(_spec("b"))
        assert running is not None and queued is not None and store.jobs.start(running) is not None
        oldest = store.job_queries.oldest_queued_at()
        assert oldest is not None and before <= oldest <= time.time()
        assert store.job_queries.stale_running(3600) == [] and store.job_queries.stale_queued(3600) == []
        time.sleep(0.05)
        assert [j.id for j in store.job_queries.stale_running(0.01)] == [running]
        assert [j.id for j in store.job_queries.stale_queued(0.01)] == [queued]
    finally:
        store.close()


def test_the_llm_use_of_a_repositorys_jobs_since_a_time(db_url: str) -> None:
    store = Store(db_url)
    try:
        job = store.jobs.add(_spec("a", pr=7, repository_id=11, installation_id=5))
        store.jobs.add(_spec("b", pr=8, repository_id=12, installation_id=5))  # another repository
        assert job is not None and store.jobs.start(job) is not None
        store.jobs.finish(job, "done", usage={"requests": 3, "tokens": 120, "prompt_tokens": 100,
                                              "completion_tokens": 20, "cached_prompt_tokens": 64})
        [(pr, requests, tokens, created_at, *split)] = store.job_queries.usage_since(11, 5, 0)
        assert (pr, requests, tokens, split) == (7, 3, 120, [100, 20, 64]) and created_at > 0
        assert store.job_queries.usage_since(11, 6, 0) == []  # another installation's ids
        assert store.job_queries.usage_since(11, 5, time.time() + 60) == []
    finally:
        store.close()


def test_the_llm_spend_per_repository_served_and_day(db_url: str) -> None:
    store = Store(db_url)
    try:
        now = time.time()
        store.repositories.seen(11, 5, "o/a", now)
        store.repositories.seen(12, 5, "o/b", now)
        usage = {"requests": 3, "tokens": 150, "prompt_tokens": 120, "completion_tokens": 30,
                 "cached_prompt_tokens": 64}
        for head, rid in (("a", 11), ("b", 11), ("c", 12), ("d", 99)):  # 99: a repository never seen
            job = store.jobs.add(_spec(head, repository_id=rid, installation_id=5))
            assert job is not None and store.jobs.start(job) is not None
            store.jobs.finish(job, "done", usage=usage)
        day = time.strftime("%Y-%m-%d", time.gmtime(now))
        spend = store.job_queries.spend_by_day()
        assert spend == [
            {"repo": "o/a", "day": day, "requests": 6, "prompt_tokens": 240, "completion_tokens": 60,
             "cached_prompt_tokens": 128, "tokens": 300},
            {"repo": "o/b", "day": day, "requests": 3, "prompt_tokens": 120, "completion_tokens": 30,
             "cached_prompt_tokens": 64, "tokens": 150}]
        assert store.job_queries.spend_by_day("o/b") == spend[1:]
        assert store.job_queries.spend_by_day(since=now + 60) == []
    finally:
        store.close()
