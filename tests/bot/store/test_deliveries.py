"""Deliveries (bot/store/deliveries.py) on SQLite and on PostgreSQL: a redelivery writes nothing,
a job whose work is already queued is not made again and the delivery's note says so, the sweep
routes a recorded delivery once, and payloads are pruned only once routed."""

from __future__ import annotations

from bot.store.store import Store

SPEC = {"kind": "analyze", "repo": "o/r", "head_sha": "c" * 40, "analyzer": "editing_rtc", "pr_number": 2}


def test_a_redelivery_writes_nothing_and_the_same_work_is_made_once(db_url: str) -> None:
    store = Store(db_url)
    try:
        ids = store.deliveries.accept("d1", "pull_request", "opened", b"{}", [SPEC, dict(SPEC)])
        assert ids is not None and len(ids) == 1
        assert store.deliveries.accept("d1", "pull_request", "opened", b"{}", [SPEC]) is None
        row = store.deliveries.get("d1")
        assert row is not None and (row.status, row.jobs) == ("routed", 1)
        assert row.note is not None and "1 job(s) not made again" in row.note
        assert [j.id for j in store.jobs.where(delivery_id="d1")] == ids
    finally:
        store.close()


def test_the_sweep_routes_a_recorded_delivery_once_then_prunes_its_payload(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.deliveries.record("d2", "pull_request", None, "{\"x\": 1}")
        assert not store.deliveries.record("d2", "pull_request", None, "{\"x\": 1}")
        assert [d.id for d in store.deliveries.unrouted(older_than_s=-1)] == ["d2"]
        assert store.deliveries.route("d2", [SPEC]) is not None
        assert store.deliveries.route("d2", [SPEC]) is None  # another sweep had it
        assert store.deliveries.unrouted(older_than_s=-1) == []
        assert store.deliveries.prune_payloads(older_than_s=-1) == 1
        row = store.deliveries.get("d2")
        assert row is not None and row.payload == "" and row.status == "routed"
    finally:
        store.close()
