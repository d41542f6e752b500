"""Backends for the App's tests: SQLite + SQLite queue (the defaults), PostgreSQL + Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.bot.app_support import REDIS_URL, drop_schema, postgres_url, redis_ok
from tests.fakes.github_server import fake_github  # noqa: F401  (fixture)
from tests.support import require


@dataclass
class Backend:
    name: str
    database_url: str | None
    redis_url: str | None


@pytest.fixture(params=["sqlite", pytest.param("postgres+redis", marks=pytest.mark.services)])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", None, None)
        return
    schema = f"rtcbot_{uuid.uuid4().hex[:10]}"
    url = postgres_url(schema)
    require(url, "PostgreSQL is not answering on 127.0.0.1:5432 (trust auth, database test)")
    require(redis_ok(), "Redis is not answering on 127.0.0.1:6379")
    try:
        yield Backend("postgres+redis", url, REDIS_URL)
    finally:
        drop_schema(schema)
