"""The short fault-injection suite (a few PRs per scenario): PostgreSQL and Redis restarted,
workers SIGKILLed, GitHub and the LLM failing at random; nothing lost, nothing doubled, every
PR's check run completed. `make chaos` runs the long version (tests/reliability/run.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.run import SHORT, run_scenario
from tests.reliability.services import Postgres, Redis, ServiceUnavailable
from tests.support import require

# its own PostgreSQL and Redis (initdb, redis-server), restarted and killed mid-run
pytestmark = [pytest.mark.chaos, pytest.mark.services, pytest.mark.slow]


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Postgres, Redis]]:
    try:
        pg, redis = Postgres(), Redis()
    except ServiceUnavailable as e:
        require(False, str(e))
        raise  # unreachable: require skips or fails
    try:
        pg.start()
        redis.start()
        yield pg, redis
    finally:
        redis.close()
        pg.close()


@pytest.mark.parametrize("name", list(SHORT))
def test_nothing_lost_nothing_doubled(name: str, servers: tuple[Postgres, Redis], tmp_path: Path) -> None:
    pg, redis = servers
    size = SHORT[name]
    tally, logs = run_scenario(name, pg, redis, tmp_path, size)
    print(tally.row(), *tally.problems, sep="\n")
    context = "\n".join([*tally.problems, logs])
    assert tally.faults > 0, f"no fault was injected\n{context}"
    assert tally.lost == 0, context
    assert tally.duplicates == 0, context
    assert tally.completed == tally.prs == size.prs, context
    if name in ("postgres_restart", "redis_restart", "worker_sigkill"):
        # transient faults: every analysis ends normally, none with an error
        assert tally.errors == 0, context


def test_tally_catches_a_doubled_and_a_lost_check_run(servers: tuple[Postgres, Redis], tmp_path: Path) -> None:
    """The tally itself: a check run completed twice is a duplicate, one never completed is lost."""
    from tests.reliability.harness import CHECK, World

    pg, redis = servers
    with World("tally", pg, redis, tmp_path) as w:
        for n in (1, 2):
            pr = w.gh.add_pr(n, diff_text=f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b{n}\n")
            w.heads[n] = pr.head_sha
        body = {"name": CHECK, "head_sha": w.heads[1], "status": "completed", "conclusion": "neutral",
                "output": {"title": "t", "summary": "s", "annotations": [
                    {"path": "x.py", "start_line": 1, "end_line": 1, "annotation_level": "notice",
                     "message": "m"}] * 2}}
        w.gh._create_run({}, body)
        w.gh._create_run({}, body)
        t = w.tally({"x": 1})
    assert (t.duplicates, t.lost, t.completed) == (1, 1, 1)
