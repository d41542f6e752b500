"""The store's jobs (bot/store/jobs.py) on SQLite and on PostgreSQL: a job's attempts, started,
requeued by the sweep and finished, each once."""

from __future__ import annotations

from bot.store.store import Store


def test_two_sweeps_that_saw_the_same_stale_attempt_requeue_it_once(db_url: str) -> None:
    """Both workers' sweeps read attempt 1 as stale; one requeues it and attempt 2 starts; the
    other's requeue must not put attempt 2 back (it would run a third time beside it)."""
    store = Store(db_url)
    job_id = store.jobs.add({"kind": "analyze", "repo": "o/r", "head_sha": "b" * 40, "analyzer": "editing_rtc",
                            "pr_number": 1})
    assert job_id is not None
    first = store.jobs.start(job_id)
    assert first is not None
    seen = first.attempts  # what both sweeps read
    assert store.jobs.requeue(job_id, expect="running", attempts=seen)
    second = store.jobs.start(job_id)
    assert second is not None and second.attempts == seen + 1
    assert not store.jobs.requeue(job_id, expect="running", attempts=seen)
    row = store.jobs.get(job_id)
    assert row is not None and (row.status, row.attempts) == ("running", seen + 1)
    store.close()


def test_an_attempt_the_sweep_replaced_cannot_overwrite_the_next_ones_end(db_url: str) -> None:
    store = Store(db_url)
    job_id = store.jobs.add({"kind": "analyze", "repo": "o/r", "head_sha": "a" * 40, "analyzer": "editing_rtc",
                            "pr_number": 1})
    assert job_id is not None
    first = store.jobs.start(job_id)
    assert first is not None and first.attempts == 1
    assert store.jobs.requeue(job_id, expect="running")  # the sweep thought its worker dead
    second = store.jobs.start(job_id)
    assert second is not None and second.attempts == 2
    assert store.jobs.finish(job_id, "done", "from the first attempt", attempt=1) is False
    assert store.jobs.status(job_id) == "running"  # the second attempt still owns it
    assert store.jobs.finish(job_id, "skipped", "from the second attempt", attempt=2) is True
    row = store.jobs.get(job_id)
    assert row is not None and (row.status, row.result) == ("skipped", "from the second attempt")
    store.close()
