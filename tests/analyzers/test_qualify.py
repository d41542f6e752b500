from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from analyzers.qualify import (
    Candidate,
    ModelResult,
    RecordError,
    Thresholds,
    bootstrap_interval,
    cheapest,
    qualified_models,
    record,
    size_bucket,
    stratified_sample,
    summarise,
    verdict_of,
)


def pool() -> list[Candidate]:
    """60 Python hunks of 1 line, 30 Python hunks of 10 lines, 8 Java hunks of 40 lines, 2 Go."""
    spec = [("python", 1, 60), ("python", 10, 30), ("java", 40, 8), ("go", 2, 2)]
    return [Candidate(f"c{lang}{size}{i}", f"f{i}", lang, size, "a", "b")
            for lang, size, count in spec for i in range(count)]


def test_size_buckets() -> None:
    assert [size_bucket(n) for n in (1, 4, 5, 16, 17)] == ["small", "small", "medium", "medium", "large"]


def test_sample_is_bounded_stratified_proportional_and_seeded() -> None:
    items = pool()
    s = stratified_sample(items, 20, seed=7)
    assert len(s) == 20 and len(set(s)) == 20
    by = Counter(c.stratum for c in s)
    # every stratum is present; the big ones in proportion (60:30 of the rest)
    assert set(by) == {c.stratum for c in items}
    assert by[("python", "small")] > by[("python", "medium")] > by[("go", "small")] >= 1
    assert by[("python", "small")] + by[("python", "medium")] + by[("java", "large")] + by[("go", "small")] == 20
    assert s == stratified_sample(items, 20, seed=7)  # seeded
    assert s != stratified_sample(items, 20, seed=8)
    assert [items.index(c) for c in s] == sorted(items.index(c) for c in s)  # history order
    assert stratified_sample(items, 500, seed=1) == items  # a bound above the pool takes all
    assert len(stratified_sample(items, 2, seed=1)) == 2  # fewer draws than strata
    with pytest.raises(ValueError):
        stratified_sample(items, 0, seed=1)


def test_bootstrap_interval() -> None:
    assert bootstrap_interval([1.0] * 10, seed=1) == (1.0, 1.0)
    assert bootstrap_interval([], seed=1) == (0.0, 0.0)
    values = [0.0, 1.0] * 20
    lo, hi = bootstrap_interval(values, seed=3)
    assert 0.25 < lo < 0.5 < hi < 0.75
    assert bootstrap_interval(values, seed=3) == (lo, hi)
    # more hunks, narrower interval
    lo2, hi2 = bootstrap_interval(values * 10, seed=3)
    assert hi2 - lo2 < hi - lo


def test_summarise_judge_and_cheapest() -> None:
    good = [{"rtc": 2 / 3, "rtc@3": 1.0, "baseline": 0.0, "lift": 2 / 3}] * 10
    flat = [{"rtc": 0.5, "rtc@3": 1.0, "baseline": 0.5, "lift": 0.0}] * 10
    a = verdict_of(summarise("a", None, good, seed=1, tokens=4000, price_per_1k=0.5), Thresholds())
    b = verdict_of(summarise("b", None, flat, seed=1, tokens=100), Thresholds())
    assert a.qualified and a.rtc == pytest.approx(2 / 3) and a.rtc_at_3 == 1.0 and a.cost == 2.0
    assert not b.qualified and b.cost is None and "lower bound" in b.reasons[0]
    assert not verdict_of(summarise("a", None, good, seed=1), Thresholds(min_rtc=0.9)).qualified
    assert not verdict_of(summarise("e", None, [], seed=1), Thresholds()).qualified
    c = verdict_of(summarise("c", None, good, seed=1, tokens=1000, price_per_1k=0.5), Thresholds())
    d = verdict_of(summarise("d", None, good, seed=1, tokens=10), Thresholds())  # unpriced: after the priced
    assert cheapest([a, b, c, d]) is c
    assert cheapest([b]) is None
    # the format rule a review applies while it runs (analyzers/llm/format_watch.py)
    sloppy = verdict_of(summarise("s", None, good, seed=1, format_share=0.2), Thresholds())
    assert not sloppy.qualified and sloppy.reasons == ["20% of its answers in the expected format, under 25%"]
    assert verdict_of(summarise("t", None, good, seed=1, format_share=0.25), Thresholds()).qualified


def test_record_round_trip(tmp_path: Path) -> None:
    a = ModelResult("a", None, qualified=True)
    b = ModelResult("b", "http://x/v1", qualified=False)
    rec = record([a, b], repository="r", revisions="last 3", date="2024-01-01", hunks_available=3,
                 thresholds=Thresholds(), seed=1)
    assert rec["cheapest_qualified"] == "a"
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rec))
    assert qualified_models(path) == {"a"}
    with pytest.raises(RecordError, match="no qualification record"):
        qualified_models(tmp_path / "none.json")
    path.write_text("{")
    with pytest.raises(RecordError, match="not JSON"):
        qualified_models(path)
    path.write_text("[]")
    with pytest.raises(RecordError, match="no 'models' list"):
        qualified_models(path)
