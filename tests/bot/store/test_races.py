"""Two workers writing the same new row at once (PostgreSQL, where the workers are processes
with connections of their own): each write is one INSERT … ON CONFLICT statement, so both
succeed and one row is left. The race is made to happen every time: a third transaction holds
an uncommitted row with the same key until every writer waits on it, then rolls back, so each
writer has found no row and inserts; the second then meets the first's row. A store that
looked for the row and then inserted lost the second writer to the primary key (the chaos
suite lost pull requests to it)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from sqlalchemy import Table, create_engine, insert, select, text

from bot.store.checks import CHECK_RUNS
from bot.store.schema import RepositoryRow
from bot.store.store import Store
from bot.store.tenants import REPOSITORIES

ON_POSTGRES = pytest.mark.parametrize(
    "backend", [pytest.param("postgres+redis", marks=pytest.mark.services)], indirect=True)
T = TypeVar("T")
MEET_S = 30.0  # how long the writers may take to reach the held row (a bound, not a measure)


def race(url: str, table: Table, held: dict[str, Any], writers: Sequence[Callable[[], T]]) -> list[T]:
    """What each of `writers` returned, run at once while a transaction holds `held` (a row of
    `table` with the key they write) uncommitted, then rolls it back once all of them wait."""
    engine = create_engine(url)
    try:
        with engine.connect() as holder, ThreadPoolExecutor(len(writers)) as pool:
            holder.execute(insert(table), held)
            pid = holder.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            waiting = text("SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))")
            futures = [pool.submit(w) for w in writers]
            deadline = time.monotonic() + MEET_S
            while holder.scalar(waiting, {"pid": pid}) < len(writers):
                done = [f for f in futures if f.done()]
                assert not done, f"a writer ended before waiting on the held row: {done[0].result()!r}"
                assert time.monotonic() < deadline, "the writers never reached the held row"
                time.sleep(0.01)
            holder.rollback()
            return [f.result() for f in futures]
    finally:
        engine.dispose()


@ON_POSTGRES
def test_two_workers_naming_a_new_repository_at_once_both_succeed(db_url: str) -> None:
    first, second = Store(db_url), Store(db_url)  # two workers: engines of their own
    try:
        held = {"id": 1, "installation_id": 77, "full_name": "o/a", "named_at": 0.0}
        changed = race(db_url, REPOSITORIES, held, [lambda: first.repositories.seen(1, 77, "o/a", at=10.0),
                                                    lambda: second.repositories.seen(1, 77, "o/a", at=10.0)])
        assert sorted(changed, key=bool) == [False, True]  # the second found the first's naming
        with first.db.session() as s:
            rows = [(r.id, r.installation_id, r.full_name, r.named_at, r.removed_at)
                    for r in s.scalars(select(RepositoryRow))]
        assert rows == [(1, 77, "o/a", 10.0, None)]
        assert first.repositories.live("o/a", 77) == 1
    finally:
        first.close()
        second.close()


@ON_POSTGRES
def test_two_jobs_claiming_or_saving_a_new_check_run_at_once_share_one_row(db_url: str) -> None:
    first, second = Store(db_url), Store(db_url)
    key = ("o/r", "rtcbot / EditingRTC", "a" * 40)
    held = {"repo": key[0], "name": key[1], "head_sha": key[2], "status": "queued", "scores": {}, "annotations": 0,
            "updated_at": 0.0}
    try:
        claimed = race(db_url, CHECK_RUNS, held, [lambda: first.checks.claim(*key), lambda: second.checks.claim(*key)])
        assert sorted(claimed, key=bool) == [False, True]  # one job creates the check run
        other = ("o/r", "rtcbot / EditingRTC", "b" * 40)
        held["head_sha"] = other[2]
        rows = race(db_url, CHECK_RUNS, held, [lambda: first.checks.save(*other, github_id=7, status="in_progress"),
                                               lambda: second.checks.save(*other, github_id=7, status="in_progress")])
        saved = first.checks.get(*other)
        assert saved is not None and [r.id for r in rows] == [saved.id, saved.id]
        assert (saved.github_id, saved.status) == (7, "in_progress")
    finally:
        first.close()
        second.close()
