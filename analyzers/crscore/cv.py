"""Cross-validation by diff for CRScore's recipes: fit on some diffs, measure on the others.

Every rating of one diff lands in the same fold (the diffs are shuffled with a seed and dealt
into k folds), so nothing learnt from a diff's ratings is measured on that diff. `cross_validate`
fits on the k − 1 training folds (`fit(train_mask)`), measures the fit on the held-out fold
(`measure(fitted, test_mask)`, a dict of figures), and reports each figure's held-out values
per fold with their mean, standard deviation, minimum and maximum — never the figure of the fit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from analyzers.crscore.recipe import GRID, Recipe
from analyzers.crscore.score import Similarities, score_all

P = TypeVar("P")


def fold_of(keys: Sequence[Hashable], k: int, seed: int = 0) -> np.ndarray:
    """Each row's fold (0..k−1), by its key (the diff): one key's rows share one fold."""
    distinct = list(dict.fromkeys(keys))
    if k < 2 or k > len(distinct):
        raise ValueError(f"cannot make {k} folds of {len(distinct)} diff(s): give 2 to {len(distinct)}")
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold = {distinct[i]: pos % k for pos, i in enumerate(order)}
    return np.asarray([fold[key] for key in keys], dtype=np.int64)


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample standard deviation, minimum and maximum of per-fold figures (NaN skipped)."""
    v = np.asarray([x for x in values if x == x], dtype=np.float64)
    if not len(v):
        return {"mean": None, "sd": None, "min": None, "max": None, "folds": []}
    return {"mean": round(float(v.mean()), 4), "sd": round(float(v.std(ddof=1)) if len(v) > 1 else 0.0, 4),
            "min": round(float(v.min()), 4), "max": round(float(v.max()), 4),
            "folds": [round(float(x), 4) for x in values]}


@dataclass
class CVResult(Generic[P]):
    k: int
    per_fold: dict[str, list[float]] = field(default_factory=dict)
    fitted: list[P] = field(default_factory=list)

    def summary(self) -> dict[str, dict[str, Any]]:
        return {name: spread(vals) for name, vals in self.per_fold.items()}


def cross_validate(folds: np.ndarray, k: int, fit: Callable[[np.ndarray], P],
                   measure: Callable[[P, np.ndarray], Mapping[str, float]]) -> CVResult[P]:
    """Fit on the other folds, measure on each held-out fold in turn."""
    out: CVResult[P] = CVResult(k)
    for i in range(k):
        fitted = fit(folds != i)
        out.fitted.append(fitted)
        for name, value in measure(fitted, folds == i).items():
            out.per_fold.setdefault(name, []).append(float(value))
    return out


def spearman(pred: np.ndarray, gold: np.ndarray) -> float:
    """Spearman's ρ (NaN when either side is constant)."""
    from scipy.stats import spearmanr  # scipy.stats costs ~1 s to import: only when measured

    with np.errstate(invalid="ignore", divide="ignore"):
        rho = spearmanr(pred, gold)[0]
    return float(rho)


def best_of(candidates: Mapping[P, np.ndarray], gold: np.ndarray, mask: np.ndarray,
            figure: Callable[[np.ndarray, np.ndarray, np.ndarray], float] | None = None) -> P:
    """The candidate whose predictions score best on the rows of `mask` (Spearman by default;
    the first listed on ties)."""
    def value(pred: np.ndarray) -> float:
        v = figure(pred, gold, mask) if figure else spearman(pred[mask], gold[mask])
        return v if v == v else float("-inf")

    return max(candidates, key=lambda c: value(candidates[c]))


def variants(sims: Sequence[Similarities], recipe: Recipe, tau: float | None = None) -> dict[Recipe, np.ndarray]:
    """Each variant CV may choose for `recipe`, with its Rel per review: the `GRID` of floor × β
    for the rtcbot recipe, the recipe alone otherwise (nothing to fit). Scoring is cheap: the
    similarity matrices are computed once."""
    options = [recipe.with_params(f, b) for f, b in GRID] if recipe.name == "rtcbot" else [recipe]
    return {r: np.asarray([s.rel for s in score_all(sims, tau, r)], dtype=np.float64) for r in options}
