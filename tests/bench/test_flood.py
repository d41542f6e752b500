"""bench/flood.py (the `flood` row): its code run in quick mode gives every figure, and its rows
judge B's wait and the throughput ratio against the issue's targets (speed is never asserted)."""

from __future__ import annotations

import re

import pytest

from bench import flood
from bench.flood import Flood, Wait, rows_from
from tests.support import require


def _flood(b_created: float, burst: float, spread: float, exact: int = 70) -> Flood:
    return Flood(60, Wait(0.2, 3.4), Wait(b_created, b_created + 3.2), 40, burst, spread, exact, 70,
                 70 - exact, 0, 1.0)


def test_rows_hold_b_to_ten_seconds_and_three_times_alone_plus_a_job() -> None:
    rows = rows_from(_flood(3.0, 60.0, 60.0))
    assert [r["met"] for r in rows] == [True, True, True]
    assert rows[0]["target"] == "≤ 10 s and ≤ 3× B alone + one job (3.8 s)"
    assert rows[1]["value"].startswith("60 / 60 = 1.00×")
    late = rows_from(_flood(4.0, 56.0, 60.0, exact=69))
    assert [r["met"] for r in late] == [False, False, False]
    assert late[2]["value"] == "69 of 70 (1 doubled, 0 lost or failed)"


@pytest.mark.slow
@pytest.mark.services
def test_the_quick_run_gives_every_figure() -> None:
    rows = flood.run(quick=True)
    require(not rows[0]["value"].startswith("not measured"), rows[0]["value"])
    assert len(rows) == 3, rows
    assert re.fullmatch(r"\d+\.\d s \(completed \d+\.\d s\); B alone first: \d+\.\d s \(completed \d+\.\d s\)",
                        rows[0]["value"]), rows[0]
    assert re.match(r"\d+ / \d+ = \d+\.\d\d× \(load average", rows[1]["value"]), rows[1]
    assert rows[2]["value"].startswith(f"{12 * 2 + 2 + 2 * 8 + 4} of {12 * 2 + 2 + 2 * 8 + 4} ("), rows[2]
