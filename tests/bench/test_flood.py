"""bench/flood.py (the `flood` row): its code run in quick mode gives every figure, on Redis and
PostgreSQL and on the embedded SQLite default, and its rows judge B's wait and the throughput
ratio against the issue's targets (speed is never asserted)."""

from __future__ import annotations

import re

import pytest

from bench import flood
from bench.flood import Flood, Wait, rows_from
from tests.support import require


def _flood(b_created: float, burst: float, spread: float, exact: int = 70, backend: str = "redis") -> Flood:
    return Flood(60, Wait(0.2, 3.4), Wait(b_created, b_created + 3.2), 40, burst, spread, exact, 70,
                 70 - exact, 0, 1.0, backend)


def test_rows_hold_b_to_ten_seconds_and_three_times_alone_plus_a_job() -> None:
    rows = rows_from(_flood(3.0, 60.0, 60.0))
    assert [r["met"] for r in rows] == [True, True, True]
    assert rows[0]["target"] == "≤ 10 s and ≤ 3× B alone + one job (3.8 s)"
    assert rows[1]["value"].startswith("60 / 60 = 1.00×")
    late = rows_from(_flood(4.0, 56.0, 60.0, exact=69))
    assert [r["met"] for r in late] == [False, False, False]
    assert late[2]["value"] == "69 of 70 (1 doubled, 0 lost or failed)"


def test_the_rows_name_their_backend_and_redis_keeps_its_names() -> None:
    redis, sqlite = rows_from(_flood(3.0, 60.0, 60.0)), rows_from(_flood(3.0, 60.0, 60.0, backend="sqlite"))
    assert redis[0]["figure"] == ("Flood: B's first check run created, B's one PR opened 1 s into A's burst of 60 "
                                  "(2 `rtcbot worker` × 2 jobs, Redis, PostgreSQL, LLM 1 s, 3 hunks a PR)")
    assert redis[1]["figure"] == ("Flood: PRs per minute, a burst of 40 (10× the 4 slots) from one installation "
                                  "/ the same spread over two")
    assert redis[2]["figure"] == "Flood: check runs completed exactly once"
    assert "SQLite database and queue" in sqlite[0]["figure"] and "Redis" not in sqlite[0]["figure"]
    assert all(r["figure"].endswith("(SQLite database and queue)") for r in sqlite[1:]), sqlite
    assert len({r["figure"] for r in redis + sqlite}) == 6


def _quick(backend: str) -> None:
    rows = flood.run(quick=True, backends=[backend])
    require(not rows[0]["value"].startswith("not measured"), rows[0]["value"])
    assert len(rows) == 3, rows
    assert re.fullmatch(r"\d+\.\d s \(completed \d+\.\d s\); B alone first: \d+\.\d s \(completed \d+\.\d s\)",
                        rows[0]["value"]), rows[0]
    assert re.match(r"\d+ / \d+ = \d+\.\d\d× \(load average", rows[1]["value"]), rows[1]
    assert rows[2]["value"].startswith(f"{12 * 2 + 2 + 2 * 8 + 4} of {12 * 2 + 2 + 2 * 8 + 4} ("), rows[2]
    assert ("SQLite" in rows[0]["figure"]) == (backend == "sqlite"), rows[0]
    assert f"LLM {flood.QUICK_LATENCY_S:g} s," in rows[0]["figure"], rows[0]  # the latency it ran at


@pytest.mark.slow
@pytest.mark.services
def test_the_quick_run_gives_every_figure() -> None:
    _quick("redis")


@pytest.mark.slow
def test_the_quick_run_on_the_embedded_sqlite_default_gives_every_figure() -> None:
    """No server: the SQLite database and queue in a temporary folder, shared by the webhook
    service and both `rtcbot worker` processes."""
    _quick("sqlite")
