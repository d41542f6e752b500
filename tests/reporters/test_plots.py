"""reporters/plots.py: a chart drawn once is not drawn again."""

from __future__ import annotations

from typing import Any

from reporters.plots import SvgMemo


def bars(*values: int) -> dict[str, Any]:
    return {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
            "data": {"values": [{"x": i, "y": v} for i, v in enumerate(values)]},
            "mark": "bar", "encoding": {"x": {"field": "x", "type": "ordinal"},
                                        "y": {"field": "y", "type": "quantitative"}}}


def test_the_same_specification_is_drawn_once_and_another_is_drawn_anew() -> None:
    memo = SvgMemo(2)
    first = memo(bars(1, 2))
    assert first.startswith("<svg") and memo.hits == 0
    assert memo(bars(1, 2)) == first and memo.hits == 1
    other = memo(bars(3, 1))
    assert other.startswith("<svg") and other != first and memo.hits == 1


def test_the_oldest_drawing_is_forgotten_past_the_size() -> None:
    memo = SvgMemo(2)
    a, b, c = bars(1), bars(2), bars(3)
    memo(a)
    memo(b)
    memo(a)  # used again: b is now the oldest
    memo(c)
    assert memo.hits == 1
    memo(a)
    assert memo.hits == 2  # kept
    memo(b)
    assert memo.hits == 2  # forgotten: drawn again
