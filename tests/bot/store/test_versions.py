"""The schema's version (bot/store/versions.py) on each backend: a new database is at
SCHEMA_VERSION; one made before versions is brought to it; one newer than this rtcbot (a
rollback) is left as it is, and said."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text

from bot.store.store import Store
from bot.store.versions import SCHEMA_VERSION, STEPS


def test_the_steps_are_numbered_in_order() -> None:
    assert [s.version for s in STEPS] == list(range(1, SCHEMA_VERSION + 1))


def test_a_new_database_and_one_made_before_versions_are_at_the_version(db_url: str) -> None:
    store = Store(db_url)
    assert store.schema_version() == SCHEMA_VERSION
    with store.engine.begin() as c:
        c.exec_driver_sql("DROP TABLE schema_version")
        c.exec_driver_sql("DROP TABLE leases")
        c.exec_driver_sql("DROP TABLE llm_request_failures")
    store.close()
    store = Store(db_url)  # started again on it, as after an upgrade
    assert store.schema_version() == SCHEMA_VERSION
    assert store.leases.take("k", job_id=1, attempt=1, ttl_s=60)
    store.llm_failures.add({"timeout": 1})
    assert store.llm_failures.totals() == [("timeout", 1)]
    store.close()


def test_a_newer_database_is_left_as_it_is(db_url: str, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(db_url)
    with store.engine.begin() as c:
        c.execute(text("UPDATE schema_version SET version = :v"), {"v": SCHEMA_VERSION + 5})
    store.close()
    with caplog.at_level(logging.WARNING, logger="bot.store.versions"):
        store = Store(db_url)  # an older rtcbot (a rollback) on it
    assert store.schema_version() == SCHEMA_VERSION + 5
    assert f"schema {SCHEMA_VERSION + 5} is newer than this rtcbot's ({SCHEMA_VERSION})" in caplog.text
    store.close()
