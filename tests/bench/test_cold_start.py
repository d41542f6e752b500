"""The cold-start row (bench/cold_start.py): a PR in a fresh process against the bench's LLM
server, its first run apart from its second. No timing is asserted: the machinery works (the
fresh process answers, its runs are split by the server's log, what was cold is named)."""

from __future__ import annotations

import pytest

from bench import cold_start, run_all, wide_set
from tests.support import require


@pytest.mark.slow  # a fresh Python that loads the embedding model and starts Node
def test_the_first_pr_of_a_fresh_process_is_measured_apart_and_names_what_was_cold() -> None:
    built = {w.source.name for w in wide_set.load()[0]}
    require("express-ee40a881f5" in built, "the wide set's files are missing")
    [m] = cold_start.measure([("javascript", "express-ee40a881f5")], delay_s=0.05)
    assert m.cold.errors == [] and m.warm.errors == []
    assert m.cold.floor == m.warm.floor == 2  # EditingRTC's two rounds; CRScore's one beside them
    cold_llm, warm_llm = len(m.cold.timeline.llm), len(m.warm.timeline.llm)
    assert cold_llm == warm_llm > 0  # each run's requests, told apart by the server's log
    ups = [stage for stage, _ in m.cold.start_ups()]
    assert "start the JSHint server" in ups
    assert not [s for s, _ in m.warm.start_ups() if "JSHint" in s]  # the second PR's JSHint is running
    rows = cold_start.rows_from([m])
    assert "express-ee40a881f5 (javascript)" in rows[0]["value"] and "JSHint" in rows[0]["value"]
    assert "cold_start" in run_all.BENCHMARKS
