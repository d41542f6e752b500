"""The Wilson score interval of a proportion."""

from __future__ import annotations

import pytest

from analyzers.intervals import wilson


def test_wilson_interval_of_8_in_10_and_of_nothing() -> None:
    assert wilson(0, 0) is None
    lo, hi = wilson(8, 10)  # type: ignore[misc]
    assert 0.49 < lo < 0.5 and 0.94 < hi < 0.95


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (1, 1), (37, 100)])
def test_wilson_interval_holds_the_rate_and_stays_in_0_1(k: int, n: int) -> None:
    lo, hi = wilson(k, n)  # type: ignore[misc]
    assert 0.0 <= lo <= k / n <= hi <= 1.0 and lo < hi
