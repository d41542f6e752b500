"""What rtcbot published (bot/store/published.py) on SQLite and on PostgreSQL: one row per marker
key and pull request, however often it is posted; applied, resolved and closed marks."""

from __future__ import annotations

from typing import Any

from bot.store.store import Store


def _row(key: str, **kw: Any) -> dict[str, Any]:
    return {"installation_id": 1, "repository_id": 5, "head_sha": "a" * 40, "analyzer": "autofix",
            "kind": "suggestion", "key": key,
            "path": "app.py", "start_line": 5, "end_line": 5, "replacement": "x = 1\n", **kw}


def test_a_key_is_recorded_once_per_pull_request(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.published.add("o/r", 1, [_row("k1"), _row("k1"), _row("k2")]) == 2
        assert store.published.add("o/r", 1, [_row("k1")]) == 0
        assert store.published.add("o/r", 2, [_row("k1")]) == 1  # another pull request
        assert store.published.keys("o/r", 1) == {"k1", "k2"}
        assert [r.key for r in store.published.rows("o/r", 1)] == ["k1", "k2"]
        assert len(store.published.rows("o/r")) == 3 and len(store.published.rows()) == 3
    finally:
        store.close()


def test_applied_resolved_and_closed_marks(db_url: str) -> None:
    store = Store(db_url)
    try:
        store.published.add("o/r", 1, [_row("k1"), _row("k2")])
        k1 = store.published.rows("o/r", 1)[0]
        store.published.mark_applied([k1.id])
        assert store.published.mark_resolved("o/r", 1, ["k2"], True) == 1
        assert store.published.mark_resolved("o/r", 1, [], True) == 0
        assert store.published.mark_closed("o/r", 1, True, {"k1": (2, 1)}) == 2
        rows = {r.key: r for r in store.published.rows("o/r", 1)}
        assert rows["k1"].applied_at is not None and rows["k2"].applied_at is None
        assert rows["k2"].resolved is True and rows["k1"].resolved is None
        assert (rows["k1"].thumbs_up, rows["k1"].thumbs_down, rows["k1"].merged) == (2, 1, True)
        assert (rows["k2"].thumbs_up, rows["k2"].merged) == (0, True)
        assert sorted(store.published.since(5, 1, 0)) == [("autofix", rows["k1"].created_at, True),
                                                           ("autofix", rows["k2"].created_at, False)]
        assert store.published.since(5, 2, 0) == []  # by GitHub's ids: another installation's is not it
        assert store.published.served() == []  # a repository the App has not seen is never served
        store.repositories.seen(5, 1, "o/r", at=0.0)
        assert [r.key for r in store.published.served("o/r")] == ["k1", "k2"]
        assert [r.key for r in store.published.served()] == ["k1", "k2"]
        assert store.published.served("o/other") == []
    finally:
        store.close()
