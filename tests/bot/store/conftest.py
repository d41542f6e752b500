"""The store's tests run on each backend (tests/bot/conftest.py `backend`): a SQLite file, or a
schema of its own on the local PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.conftest import Backend


@pytest.fixture
def db_url(backend: Backend, tmp_path: Path) -> str:
    return backend.database_url or f"sqlite:///{tmp_path / 'rtcbot.sqlite3'}"
