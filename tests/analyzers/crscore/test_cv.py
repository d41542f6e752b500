"""Cross-validation by diff: no diff on both sides, held-out figures only, the spread."""

from __future__ import annotations

import numpy as np
import pytest

from analyzers.crscore import cv


def test_folds_keep_each_diff_on_one_side_and_follow_the_seed() -> None:
    keys = [d for d in "abcdefghij" for _ in range(3)]  # 10 diffs × 3 ratings
    folds = cv.fold_of(keys, 5, seed=0)
    for d in set(keys):
        assert len({int(f) for k, f in zip(keys, folds, strict=True) if k == d}) == 1
    assert sorted(np.bincount(folds).tolist()) == [6] * 5  # two diffs a fold
    assert (cv.fold_of(keys, 5, seed=0) == folds).all()
    assert not (cv.fold_of(keys, 5, seed=1) == folds).all()
    with pytest.raises(ValueError, match="cannot make 11 folds of 10"):
        cv.fold_of(keys, 11)


def test_cross_validate_fits_on_the_other_folds_and_measures_the_held_out_one() -> None:
    folds = np.array([0, 0, 1, 1, 2, 2])
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def fit(train: np.ndarray) -> int:
        return int(train.sum())

    def measure(fitted: int, test: np.ndarray) -> dict[str, float]:
        seen.append((np.flatnonzero(test), folds[test]))
        return {"rows": float(test.sum()), "fitted": float(fitted)}

    out = cv.cross_validate(folds, 3, fit, measure)
    assert out.fitted == [4, 4, 4] and out.per_fold["rows"] == [2.0, 2.0, 2.0]
    assert [f.tolist() for _, f in seen] == [[0, 0], [1, 1], [2, 2]]
    s = out.summary()["rows"]
    assert (s["mean"], s["sd"], s["min"], s["max"]) == (2.0, 0.0, 2.0, 2.0)


@pytest.mark.slow  # scipy.stats is imported for Spearman
def test_spread_and_best_of() -> None:
    s = cv.spread([0.5, 0.6, float("nan"), 0.7])
    assert (s["mean"], s["min"], s["max"]) == (0.6, 0.5, 0.7) and s["sd"] == pytest.approx(0.1)
    gold = np.array([1.0, 2.0, 3.0, 4.0])
    cands = {"up": np.array([1.0, 2.0, 3.0, 4.0]), "down": np.array([4.0, 3.0, 2.0, 1.0])}
    assert cv.best_of(cands, gold, np.ones(4, dtype=bool)) == "up"
    assert cv.best_of(cands, -gold, np.ones(4, dtype=bool)) == "down"
