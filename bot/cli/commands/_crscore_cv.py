"""Cross-validation by diff for `rtcbot eval crscore` and `rtcbot eval review-filter`: what
each fold fits for a recipe (analyzers/crscore/recipe.py) on its training diffs, and the
per-fold table. The arithmetic is analyzers/crscore/cv.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from analyzers.crscore import cv
from analyzers.crscore import score as crs
from analyzers.crscore.recipe import Pick, Recipe

Fitted = Recipe | float  # a recipe with its floor and β, or the paper's τ


def diff_key(row: dict[str, Any]) -> tuple[str, str, str]:
    """What makes a diff one diff in the human-rating files: its language, index and text."""
    return str(row.get("lang", "")), str(row.get("index", "")), str(row["diff"])


def folds_of(rows: Sequence[dict[str, Any]], k: int, seed: int) -> np.ndarray:
    try:
        return cv.fold_of([diff_key(r) for r in rows], k, seed)
    except ValueError as e:
        raise click.UsageError(f"--cv: {e}") from None


def rel_fitter(sims: Sequence[crs.Similarities], rows: Sequence[dict[str, Any]], recipe: Recipe,
               tau: float | None, msg: Sequence[tuple[dict[str, Any], crs.Scores]] = ()
               ) -> tuple[Callable[[np.ndarray], Fitted], Callable[[Fitted], np.ndarray]]:
    """(fit on training rows, Rel of every row for what was fitted). rtcbot: the floor × β of
    the grid with the best training Spearman; paper: τ by the paper's recipe on the training
    diffs' reference (`msg`) reviews, unless τ was given; soft: nothing to fit."""
    gold = np.asarray([float(r["human"]["rel"]) for r in rows], dtype=np.float64)
    if recipe.thresholded:
        keys = [diff_key(r) for r in rows]

        def fit_tau(train: np.ndarray) -> Fitted:
            if tau is not None:
                return tau
            seen = {k for k, t in zip(keys, train, strict=True) if t}
            return crs.calibrate_tau([b for r, s in msg if diff_key(r) in seen for b in s.sentence_best])

        def rel_at_tau(fitted: Fitted) -> np.ndarray:
            assert isinstance(fitted, float)
            return np.asarray([s.rel for s in crs.score_all(sims, fitted, recipe)], dtype=np.float64)

        return fit_tau, rel_at_tau
    candidates = cv.variants(sims, recipe)

    def fit(train: np.ndarray) -> Fitted:
        return cv.best_of(candidates, gold, train)

    def rel_at(fitted: Fitted) -> np.ndarray:
        assert isinstance(fitted, Recipe)
        return candidates[fitted]

    return fit, rel_at


def fitted_label(fitted: Any) -> str:
    """What a fold fitted, in words: a recipe's floor and β, a pick's (with its margin), or τ."""
    if isinstance(fitted, Pick):
        return f"pick: {fitted.describe()}"
    if isinstance(fitted, Recipe):
        return f"floor {fitted.floor:g}, β {fitted.beta:g}"
    return f"τ {fitted:.4f}"


def print_folds(title: str, result: cv.CVResult[Any], figures: Sequence[str]) -> None:
    """One row per held-out fold (what its training folds chose, its figures), then mean ± sd."""
    table = Table(title=title)
    for col in ("held-out fold", "fitted on the other folds", *figures):
        table.add_column(col, justify="left" if col.startswith(("held", "fitted")) else "right")
    for i, fitted in enumerate(result.fitted):
        table.add_row(str(i + 1), fitted_label(fitted), *(f"{result.per_fold[f][i]:.4f}" for f in figures))
    summary = result.summary()
    table.add_row("mean ± sd", "", *(f"{summary[f]['mean']} ± {summary[f]['sd']}" for f in figures))
    table.add_row("min – max", "", *(f"{summary[f]['min']} – {summary[f]['max']}" for f in figures))
    Console().print(table)
