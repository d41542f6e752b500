"""Backends for the App's tests: SQLite + SQLite queue (the defaults), PostgreSQL + Redis; and
the App end to end on each (`apps`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.bot.app_support import REDIS_URL, App, drop_schema, postgres_url, redis_ok, running_app
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fake_github: a fixture)
from tests.fakes.llm_server import ScriptedLLM, varied
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


@pytest.fixture
def apps(tmp_path: Path, backend: Backend, scripted_llm: Callable[..., ScriptedLLM]) -> Iterator[Callable[..., App]]:
    """`apps(gh, *more_gh, responder=varied, llm_delay_s=0.0, **settings)`: the App (`running_app`)
    on this test's backend for the installations of the given fake GitHubs, on a scripted LLM that
    answers with `responder`, each answer `llm_delay_s` late; each one served until the test ends."""
    with ExitStack() as stack:
        def start(gh: FakeGitHub, *more: FakeGitHub, responder: Any = varied, llm_delay_s: float = 0.0,
                  **settings: Any) -> App:
            return stack.enter_context(running_app(tmp_path, gh, scripted_llm(responder, delay_s=llm_delay_s), *more,
                                                   database_url=backend.database_url,
                                                   redis_url=backend.redis_url, **settings))

        yield start
