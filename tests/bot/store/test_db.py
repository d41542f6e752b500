"""The database under the store (bot/store/db.py): what callers outside it are told of URLs
and errors, in plain words, without importing SQLAlchemy."""

from __future__ import annotations

import pytest

from bot.store.db import DatabaseError, database_away, error_reason, safe_url, url_problem
from bot.store.store import Store


@pytest.mark.parametrize(("url", "problem"), [
    ("sqlite:////tmp/x.db", None),
    ("postgresql+psycopg://u:p@db/rtcbot", None),
    ("not a url", "not a database URL (e.g. postgresql://rtcbot@db.internal/rtcbot)"),
    ("mysql://u@db/x", "rtcbot stores its data in PostgreSQL or SQLite, not 'mysql' "
                       "(e.g. postgresql://rtcbot@db.internal/rtcbot)"),
])
def test_url_problem(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


def test_a_password_is_never_shown() -> None:
    assert safe_url("postgresql+psycopg://rtcbot:hunter2@db/rtcbot") == "postgresql+psycopg://***@db/rtcbot"
    assert safe_url("::") == "(unreadable)"


def test_a_database_that_does_not_answer_is_away_with_the_servers_reason() -> None:
    dead = Store("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1", create=False)
    with pytest.raises(DatabaseError) as e:
        dead.ping()
    dead.close()
    assert database_away(e.value)
    reason = error_reason(e.value)
    assert reason == "Connection refused"  # the server's reason, in one line
    assert error_reason(ValueError("not the database")) is None and not database_away(ValueError("x"))
