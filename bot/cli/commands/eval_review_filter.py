"""`rtcbot eval review-filter DATASET`: does picking review comments by CRScore pick the ones
people rate best?

The `review` analyzer drafts several comments per hunk and keeps the best by CRScore. This
measures that filter on the CRScore human ratings (the format of the bundled `crscore-dev`):
the generated reviews of each diff (every `system` but `msg`) stand in for the candidates.
Per diff, the top-1 by CRScore (MiniLM, tokens pooling, the dataset's claims + smells; the
recipe's pick) and the top half by the same score are picked; the report gives
the mean human Rel / Con / Comp of the picked comments against the mean of all the diff's
comments (a random pick) and the best possible pick (the diff's highest human rating),
`gain_captured` = (picked − all) / (best − all), and how often the pick is a human-best
(`top1_is_best`; `top1_chance` is a random pick's rate), each with a bootstrap interval
over diffs. `--recipe` says how CRScore is computed and how the top-1 is picked
(analyzers/crscore/recipe.py: rtcbot's pick scores with its own floor and β, less a penalty for
a comment that ends with a question, and takes the longest candidate within a margin of the
best); `--cv K` fits the pick (floor × β × question penalty × margin, by gain) on
K − 1 folds of the diffs and reports the held-out gain and top-1 rate of each fold with their
spread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from analyzers.crscore import cv
from analyzers.crscore import score as crs
from analyzers.crscore.recipe import DEFAULT_RECIPE, PICKS, RECIPES, Pick, Recipe, ends_asking, pick_top
from analyzers.crscore.sts import DEFAULT_MODEL, Embedder, EmbeddingError
from bot.cli.commands._crscore_cv import diff_key, fitted_label, folds_of, print_folds, rel_fitter
from bot.cli.commands._datasets import DatasetArgument
from bot.cli.commands.eval_crscore import embed_all, load_rows, pseudo_refs_of

DIMS = ("rel", "con", "comp")
REF_SOURCES = ("magicoder", "gpt4o", "human_verified")


Candidate = tuple[float, dict[str, float], int]  # CRScore Rel, human ratings, length in words


def group_by_diff(rows: Sequence[dict[str, Any]], scores: Sequence[float]) -> list[list[Candidate]]:
    """Per diff (in first-seen order): each generated review's (CRScore Rel, human ratings,
    words); diffs with fewer than two reviews are left out (there is nothing to pick from)."""
    groups: dict[tuple[str, str, str], list[Candidate]] = {}
    for row, s in zip(rows, scores, strict=True):
        groups.setdefault(diff_key(row), []).append(
            (float(s), {d: float(row["human"][d]) for d in DIMS}, len(str(row.get("review", "")).split())))
    return [g for g in groups.values() if len(g) >= 2]


def per_diff(groups: Sequence[Sequence[Candidate]], margin: float = 0.0) -> dict[str, np.ndarray]:
    """Per diff: picked / half / all / best for each dimension, and whether the pick is a
    human-best on Rel (and a random pick's chance of that). The pick: `pick_top` (margin 0:
    the best Rel, first on ties)."""
    cols: dict[str, list[float]] = {}
    for g in groups:
        order = sorted(range(len(g)), key=lambda i: -g[i][0])  # stable: ties keep dataset order
        top, half = pick_top([c[0] for c in g], [c[2] for c in g], margin), order[:math.ceil(len(g) / 2)]
        for d in DIMS:
            human = [h[d] for _, h, _ in g]
            cols.setdefault(f"picked_{d}", []).append(human[top])
            cols.setdefault(f"half_{d}", []).append(float(np.mean([human[i] for i in half])))
            cols.setdefault(f"all_{d}", []).append(float(np.mean(human)))
            cols.setdefault(f"best_{d}", []).append(max(human))
        rel = [h["rel"] for _, h, _ in g]
        cols.setdefault("top1_is_best", []).append(1.0 if rel[top] == max(rel) else 0.0)
        cols.setdefault("top1_chance", []).append(rel.count(max(rel)) / len(rel))
    return {k: np.asarray(v, dtype=np.float64) for k, v in cols.items()}


def gain(picked: np.ndarray, all_: np.ndarray, best: np.ndarray) -> np.ndarray:
    """(picked − all) / (best − all) over the mean of each (rows: bootstrap samples); NaN
    where no pick could beat a random one."""
    room = best - all_
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(room > 0, (picked - all_) / np.where(room > 0, room, 1.0), np.nan)


def summarise(cols: dict[str, np.ndarray], samples: int, seed: int) -> dict[str, Any]:
    n = len(cols["picked_rel"])
    out: dict[str, Any] = {k: round(float(v.mean()), 4) for k, v in cols.items()}
    for prefix in ("picked", "half"):
        g = gain(np.array(cols[f"{prefix}_rel"].mean()), np.array(cols["all_rel"].mean()),
                 np.array(cols["best_rel"].mean()))
        out["gain_captured" if prefix == "picked" else "half_gain_captured"] = (
            None if np.isnan(g) else round(float(g), 4))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(samples, n))
    means = {k: v[idx].mean(axis=1) for k, v in cols.items()}
    boot = {"picked_rel": means["picked_rel"], "top1_is_best": means["top1_is_best"],
            "gain_captured": gain(means["picked_rel"], means["all_rel"], means["best_rel"]),
            "picked_minus_all_rel": means["picked_rel"] - means["all_rel"]}
    out["ci95"] = {k: [round(float(np.nanpercentile(v, 2.5)), 4), round(float(np.nanpercentile(v, 97.5)), 4)]
                   for k, v in boot.items()}
    out["n_diffs"] = n
    return out


def filter_figures(rows: Sequence[dict[str, Any]], rels: np.ndarray, margin: float,
                   mask: np.ndarray) -> dict[str, float]:
    """Gain captured and top-1 rate of picking by `rels` (with `margin`) on the rows of `mask`."""
    groups = group_by_diff([r for r, m in zip(rows, mask, strict=True) if m], [float(x) for x in rels[mask]])
    if not groups:
        return {"gain_captured": float("nan"), "top1_is_best": float("nan")}
    cols = per_diff(groups, margin)
    g = gain(np.array(cols["picked_rel"].mean()), np.array(cols["all_rel"].mean()), np.array(cols["best_rel"].mean()))
    return {"gain_captured": float(g), "top1_is_best": float(cols["top1_is_best"].mean())}


def pick_fitter(sims: list[crs.Similarities], rows: list[dict[str, Any]], recipe: Recipe
                ) -> tuple[Callable[[np.ndarray], Pick], Callable[[Pick, np.ndarray], dict[str, float]]]:
    """(fit, measure) of the filter's pick: the `PICKS` (floor × β × question penalty ×
    margin) with the best training gain (the first listed on ties), and its gain and top-1 rate
    on held-out rows."""
    rels = cv.variants(sims, recipe)
    asking = np.asarray([ends_asking(sentences) for sentences, _, _ in sims], dtype=bool)

    def figures(p: Pick, mask: np.ndarray) -> dict[str, float]:
        return filter_figures(rows, p.value(rels[recipe.with_params(p.floor, p.beta)], asking), p.margin, mask)

    def fit(train: np.ndarray) -> Pick:
        return max(PICKS, key=lambda p: np.nan_to_num(figures(p, train)["gain_captured"], nan=-np.inf))

    return fit, figures


def cross_validated(sims: list[crs.Similarities], rows: list[dict[str, Any]], recipe: Recipe,
                    tau: float | None, k: int, seed: int, table: bool) -> dict[str, Any]:
    """--cv K: the filter's pick (rtcbot: floor, β and margin by training gain; soft: nothing to
    fit; paper: τ as shipped) and each held-out fold's gain captured and top-1 rate."""
    folds = folds_of(rows, k, seed)
    if recipe.pick is not None:
        fit_pick, measure_pick = pick_fitter(sims, rows, recipe)
        result: cv.CVResult[Any] = cv.cross_validate(folds, k, fit_pick, measure_pick)
    else:
        fit_rel, rel_of = rel_fitter(sims, rows, recipe, tau)
        result = cv.cross_validate(folds, k, fit_rel,
                                   lambda fitted, test: filter_figures(rows, rel_of(fitted), 0.0, test))
    summary = result.summary()
    if table:
        print_folds(f"Picking review comments by CRScore: {k}-fold cross-validation by diff, held-out figures",
                    result, ("gain_captured", "top1_is_best"))
    return {"cv": k, "seed": seed, "gain_captured": summary["gain_captured"]["mean"],
            "top1_is_best": summary["top1_is_best"]["mean"], "folds": summary,
            "fitted": [fitted_label(f) for f in result.fitted]}


@click.command("review-filter")
@click.argument("data", type=DatasetArgument("crscore"), metavar="DATASET")
@click.option("--pseudo-refs", "source", type=click.Choice(REF_SOURCES), default="magicoder", show_default=True,
              help="The dataset's claims (plus its smells) that CRScore scores against.")
@click.option("--recipe", "recipe_name", type=click.Choice(tuple(RECIPES)), default=DEFAULT_RECIPE,
              show_default=True, help="How CRScore is computed and the top-1 picked (paper: thresholded, τ shipped).")
@click.option("--cv", "cv_k", type=click.IntRange(min=2), default=None, metavar="K",
              help="Fit the recipe on K−1 folds of the diffs, report each held-out fold and the spread.")
@click.option("--bootstrap", "samples", type=click.IntRange(100, 100_000), default=2000, show_default=True,
              help="Bootstrap resamples of the diffs for the 95 % intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="The bootstrap's seed (and --cv's folds').")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N rows.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on one line.")
def command(data: Path, source: str, recipe_name: str, cv_k: int | None, samples: int, seed: int,
            limit: int | None, as_json: bool) -> None:
    """How good the comments CRScore picks are, by the human ratings in DATASET.

    DATASET: a JSON-lines file, or the bundled `crscore-dev` (see `rtcbot eval --list`)."""
    rows = load_rows(data)
    rows = [r for r in (rows[:limit] if limit else rows) if r["system"] != "msg"]
    if not rows:
        raise click.ClickException(f"{data}: no rows with system other than msg")
    for r in rows:
        bad = [d for d in DIMS if not isinstance(r["human"].get(d), int | float)]
        if bad:
            raise click.ClickException(f"{data}: row {r.get('index')}: 'human' needs numbers for {', '.join(bad)}")
    if cv_k is not None:
        folds_of(rows, cv_k, seed)  # too many folds for the diffs: say so before the embeddings
    recipe = RECIPES[recipe_name]
    tau = crs.tau_for(DEFAULT_MODEL, "tokens") if recipe.thresholded else None
    try:
        sims = embed_all(Embedder(DEFAULT_MODEL, pooling="tokens"),
                         [(str(r["review"]), pseudo_refs_of(r, source, None)) for r in rows], "scoring")
    except EmbeddingError as e:
        raise click.ClickException(str(e)) from None
    about = {"pseudo_refs": source, "model": DEFAULT_MODEL, "recipe": recipe.name,
             "pick_by": pick_words(recipe)}
    if cv_k is not None:
        out = {**cross_validated(sims, rows, recipe, tau, cv_k, seed, not as_json), **about}
        click.echo(json.dumps(out) if as_json else f"recipe {recipe.name}; folds dealt with seed {seed}")
        return
    groups = group_by_diff(rows, [crs.pick_value(s, recipe) for s in crs.score_all(sims, tau, recipe)])
    if not groups:
        raise click.ClickException(f"{data}: no diff has two or more generated reviews to pick from")
    out = summarise(per_diff(groups, recipe.margin), samples, seed)
    out.update({"n_reviews": sum(len(g) for g in groups), **about})
    if as_json:
        click.echo(json.dumps(out))
        return
    print_summary(out, data.name)


def pick_words(recipe: Recipe) -> str:
    """How the top-1 is picked, in words."""
    if recipe.pick is None:
        return f"crscore {recipe.describe()}, best Rel"
    return f"crscore rtcbot pick ({recipe.pick.describe()}: the longest within the margin of the best)"


def print_summary(out: dict[str, Any], name: str) -> None:
    table = Table(title=f"Picking review comments by CRScore Rel on {name} "
                        f"({out['n_diffs']} diffs, {out['n_reviews']} reviews; human ratings 1–5)")
    for col in ("human rating", "top-1 pick", "top half", "all (random pick)", "best possible"):
        table.add_column(col, justify="left" if col == "human rating" else "right")
    for d in DIMS:
        table.add_row(d.capitalize(), str(out[f"picked_{d}"]), str(out[f"half_{d}"]), str(out[f"all_{d}"]),
                      str(out[f"best_{d}"]))
    Console().print(table)
    ci = out["ci95"]
    click.echo(f"gain captured (Rel): {out['gain_captured']} (95 % CI {ci['gain_captured'][0]}–"
               f"{ci['gain_captured'][1]}); top half: {out['half_gain_captured']}")
    click.echo(f"top-1 is a human-best: {out['top1_is_best']} (95 % CI {ci['top1_is_best'][0]}–"
               f"{ci['top1_is_best'][1]}; a random pick: {out['top1_chance']}); picked by {out['pick_by']}")
