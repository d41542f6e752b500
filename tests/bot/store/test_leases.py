"""The analyses' leases (bot/store/leases.py) on each backend: one holder at a time, a later
attempt of the same job takes over at once, any other job only once the lease is released
or has expired unrenewed."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from bot.store.leases import FORGET_AFTER_S, lease_key
from bot.store.store import Store

KEY = lease_key(42, "octo/repo", "a" * 40, "editing_rtc")


def test_one_holder_until_released(db_url: str) -> None:
    store = Store(db_url)
    assert KEY == f"42:{'a' * 40}:editing_rtc"
    assert lease_key(None, "octo/repo", "b", "crscore") == "octo/repo:b:crscore"
    assert store.leases.take(KEY, job_id=1, attempt=1, ttl_s=60)
    assert not store.leases.take(KEY, job_id=2, attempt=1, ttl_s=60), "another job waits"
    assert store.leases.holds(KEY, 1, 1) and not store.leases.holds(KEY, 2, 1)
    store.leases.release(KEY, 2, 1)  # not its lease: nothing happens
    assert store.leases.holds(KEY, 1, 1)
    store.leases.release(KEY, 1, 1)
    assert store.leases.holder(KEY) is None
    assert store.leases.take(KEY, job_id=2, attempt=1, ttl_s=60)
    store.close()


def test_a_later_attempt_takes_over_and_the_earlier_one_knows(db_url: str) -> None:
    store = Store(db_url)
    assert store.leases.take(KEY, job_id=7, attempt=1, ttl_s=60)
    assert store.leases.take(KEY, job_id=7, attempt=2, ttl_s=60), "the takeover supersedes its earlier attempt"
    assert not store.leases.holds(KEY, 7, 1) and store.leases.holds(KEY, 7, 2)
    assert not store.leases.take(KEY, job_id=7, attempt=1, ttl_s=60), "never back to the earlier attempt"
    store.leases.release(KEY, 7, 1)  # the earlier attempt's release frees nothing
    assert store.leases.holds(KEY, 7, 2)
    store.close()


def test_an_unrenewed_lease_expires_and_a_renewed_one_does_not(db_url: str) -> None:
    store = Store(db_url)
    assert store.leases.take(KEY, job_id=1, attempt=1, ttl_s=0.6)
    other = lease_key(42, "octo/repo", "c" * 40, "editing_rtc")
    assert store.leases.take(other, job_id=3, attempt=1, ttl_s=0.6)
    for _ in range(4):  # job 3 beats; job 1 died
        time.sleep(0.25)
        assert store.leases.renew(3) == 1
    assert store.leases.renew(99) == 0
    assert store.leases.take(KEY, job_id=2, attempt=1, ttl_s=60), "its holder stopped renewing it"
    assert not store.leases.take(other, job_id=4, attempt=1, ttl_s=60), "renewed: still held"
    store.close()


def test_jobs_taking_a_free_lease_at_once_one_wins(db_url: str) -> None:
    store = Store(db_url)
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda j: store.leases.take(KEY, job_id=j, attempt=1, ttl_s=60), range(1, 9)))
    assert won.count(True) == 1
    holder = store.leases.holder(KEY)
    assert holder is not None and won[holder.job_id - 1]
    store.close()


def test_a_lease_its_dead_holder_left_a_day_ago_is_forgotten_by_the_next_release(db_url: str) -> None:
    store = Store(db_url)
    old = lease_key(42, "octo/repo", "d" * 40, "editing_rtc")
    assert store.leases.take(old, job_id=5, attempt=1, ttl_s=-FORGET_AFTER_S - 60)  # expired a day ago
    assert store.leases.take(KEY, job_id=6, attempt=1, ttl_s=60)
    store.leases.release(KEY, 6, 1)
    assert store.leases.holder(old) is None and store.leases.holder(KEY) is None
    store.close()
