"""bench/run_all.py's `merged`: a row run alone replaces its own rows and keeps what others say."""

from __future__ import annotations

from bench.run_all import merged

DOC = """# Benchmarks

- Python: CPython
{alone}
| benchmark | figure | value | target | met? |
|---|---|---|---|---|
| flood | f | 1 | — | — |
| cost | c | {cost} | — | — |

Time each benchmark took (informational): flood 9 s, cost 1 s.
"""


def test_an_earlier_run_alone_stays_said_unless_its_benchmarks_ran_again() -> None:
    old = DOC.format(alone="- run alone: flood on day 1 (`--only`; the other rows are of the date above)\n", cost=1)
    out = merged(old, DOC.format(alone="", cost=2), ["cost"], "day 2")
    assert "- run alone: flood on day 1" in out and "- run alone: cost on day 2" in out
    assert "| cost | c | 2 |" in out and "| flood | f | 1 |" in out
    again = merged(out, DOC.format(alone="", cost=3), ["flood"], "day 3")
    assert "flood on day 1" not in again and "- run alone: flood on day 3" in again
    assert "- run alone: cost on day 2" in again
