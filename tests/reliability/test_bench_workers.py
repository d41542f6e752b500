"""bench/workers.py's rows: the ratio to one worker against its target, and exactly once."""

from __future__ import annotations

from bench.workers import Run, rows_from


def test_rows_give_the_ratio_and_flag_a_doubled_check_run() -> None:
    runs = [Run(1, 10, 60.0, 10, 0, 0), Run(2, 20, 60.0, 20, 0, 0), Run(4, 40, 60.0, 39, 1, 0)]
    rows = {r["figure"].split(" (")[0]: r for r in rows_from(runs)}
    ratio = rows["Many workers: throughput of 4 workers / 1 worker"]
    assert ratio["value"] == "4.00×" and ratio["met"] is True
    once = rows["Many workers: check runs completed exactly once"]
    assert once["met"] is False and once["value"].startswith("69 of 70 (1 doubled")
    slow = rows_from([Run(1, 10, 60.0, 10, 0, 0), Run(4, 40, 120.0, 40, 0, 0)])
    assert slow[1]["value"] == "2.00×" and slow[1]["met"] is False
