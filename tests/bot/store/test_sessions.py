"""The dashboard's sessions (bot/store/sessions.py) on SQLite and on PostgreSQL: kept by the hash
the caller gives, any size, gone once ended or expired, and expired ones pruned."""

from __future__ import annotations

import time

from bot.store.store import Store


def test_a_session_is_kept_replaced_and_ended(db_url: str) -> None:
    store = Store(db_url)
    try:
        now = time.time()
        repos = {f"octo-org/repo-{i}": 70_000 + i for i in range(5_000)}  # no cookie could hold this
        store.sessions.put("a" * 64, {"login": "octocat", "repos": repos}, created_at=now, expires_at=now + 60)
        row = store.sessions.get("a" * 64)
        assert row is not None and row.data == {"login": "octocat", "repos": repos}
        assert (row.created_at, row.expires_at) == (now, now + 60)
        store.sessions.put("a" * 64, {"login": "octocat", "csrf": "t"}, created_at=now, expires_at=now + 30)
        row = store.sessions.get("a" * 64)
        assert row is not None and row.data == {"login": "octocat", "csrf": "t"} and row.expires_at == now + 30
        assert store.sessions.get("b" * 64) is None
        assert store.sessions.end("a" * 64) is True
        assert store.sessions.get("a" * 64) is None
        assert store.sessions.end("a" * 64) is False  # ended once
    finally:
        store.close()


def test_an_expired_session_reads_as_gone_and_is_pruned(db_url: str) -> None:
    store = Store(db_url)
    try:
        now = time.time()
        store.sessions.put("old", {"login": "a"}, created_at=now - 100, expires_at=now - 1)
        store.sessions.put("new", {"login": "b"}, created_at=now, expires_at=now + 100)
        assert store.sessions.get("old") is None  # before any prune
        assert store.sessions.get("new", now=now + 101) is None
        assert store.sessions.prune() == 1
        assert store.sessions.prune() == 0
        row = store.sessions.get("new")
        assert row is not None and row.data == {"login": "b"}
        assert store.sessions.prune(now=now + 100) == 1
        assert store.sessions.get("new", now=now) is None  # dropped, not only expired
    finally:
        store.close()
