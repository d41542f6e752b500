"""Installations (bot/store/tenants.py) on SQLite and on PostgreSQL: saved by GitHub's id,
updated in place."""

from __future__ import annotations

from bot.store.store import Store


def test_an_installation_is_saved_and_updated_by_its_id(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.installations.get(42) is None
        store.installations.save(42, "octo-org", True)
        store.installations.save(42, "octo-org-renamed", False)
        row = store.installations.get(42)
        assert row is not None and (row.account, row.active) == ("octo-org-renamed", False)
    finally:
        store.close()
