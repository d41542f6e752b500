"""`rtcbot eval review-filter` on a slice of the real CRScore human ratings, and its arithmetic
on hand-made diffs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from analyzers.crscore.recipe import PICKS, RECIPES, Pick
from bot.cli.commands.eval_review_filter import command, group_by_diff, per_diff, pick_fitter, summarise
from tests.support import DATA, require

DEV = DATA / "crscore-human" / "dev.jsonl"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(DEV.exists(), f"{DEV} is missing")
    lines = DEV.read_text(encoding="utf-8").splitlines()[:40]  # 4 diffs × 10 systems
    out = tmp_path_factory.mktemp("rf") / "small.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.slow
@pytest.mark.model
def test_json_on_a_slice_of_the_dev_split(small: Path) -> None:
    res = CliRunner().invoke(command, [str(small), "--json", "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert {"picked_rel", "all_rel", "best_rel", "gain_captured", "top1_is_best", "n_diffs"} <= set(out)
    assert out["n_diffs"] == 4 and out["n_reviews"] == 36  # the msg (human) rows are not candidates
    for d in ("rel", "con", "comp"):
        assert 1 <= out[f"all_{d}"] <= out[f"best_{d}"] <= 5 and out[f"picked_{d}"] <= out[f"best_{d}"]
    assert out["picked_rel"] > out["all_rel"]  # CRScore's pick beats a random one even on 4 diffs
    assert out["gain_captured"] == pytest.approx(
        (out["picked_rel"] - out["all_rel"]) / (out["best_rel"] - out["all_rel"]), abs=1e-3)
    lo, hi = out["ci95"]["top1_is_best"]
    assert 0 <= lo <= out["top1_is_best"] <= hi <= 1


def test_the_pick_follows_crscore_and_gain_is_measured_against_the_best_pick() -> None:
    def row(diff: str, crs: float, rel: float) -> tuple[dict[str, object], float]:
        return {"diff": diff, "index": diff, "human": {"rel": rel, "con": rel, "comp": rel}}, crs

    pairs = [row("a", 0.9, 5), row("a", 0.1, 1), row("a", 0.5, 3),   # picks the best: gain 1 here
             row("b", 0.9, 1), row("b", 0.2, 3),                      # picks the worst
             row("c", 0.4, 2)]                                        # one review: nothing to pick
    groups = group_by_diff([r for r, _ in pairs], [s for _, s in pairs])
    assert [len(g) for g in groups] == [3, 2]
    out = summarise(per_diff(groups), 200, 0)
    assert out["n_diffs"] == 2 and out["top1_is_best"] == 0.5 and out["top1_chance"] == pytest.approx(0.4167, abs=1e-4)
    assert (out["picked_rel"], out["all_rel"], out["best_rel"]) == (3.0, 2.5, 4.0)
    assert out["gain_captured"] == pytest.approx(1 / 3, abs=1e-3) and out["half_rel"] == 2.5  # (5+3)/2, 1


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"review": "x", "system": "a", "diff": "d", "human": {"rel": 3, "con": "high"}}\n',
                   encoding="utf-8")
    res = CliRunner().invoke(command, [str(bad)])
    assert res.exit_code != 0 and "needs numbers for con, comp" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(command, [str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "neither a file nor a bundled dataset" in res.output


def test_a_margin_picks_the_longest_review_near_the_best() -> None:
    rows = [{"diff": "a", "index": "a", "review": words, "human": {"rel": rel, "con": rel, "comp": rel}}
            for words, rel in (("short one", 2), ("a much longer review that says more", 4), ("x", 1))]
    groups = group_by_diff(rows, [0.50, 0.46, 0.1])
    assert per_diff(groups)["picked_rel"].tolist() == [2.0]  # margin 0: the best Rel
    assert per_diff(groups, 0.05)["picked_rel"].tolist() == [4.0]  # within 0.05: the longer one


@pytest.mark.slow
@pytest.mark.model
def test_cv_reports_held_out_gain_and_top1_with_their_spread(small: Path) -> None:
    res = CliRunner().invoke(command, [str(small), "--cv", "2", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["cv"] == 2 and out["recipe"] == "rtcbot" and len(out["fitted"]) == 2
    for fig in ("gain_captured", "top1_is_best"):
        s = out["folds"][fig]
        assert len(s["folds"]) == 2 and s["min"] <= out[fig] == s["mean"] <= s["max"]
    assert all(f.startswith("pick: floor ") and "margin" in f for f in out["fitted"])  # the whole pick, per fold
    paper = CliRunner().invoke(command, [str(small), "--recipe", "paper", "--json", "--bootstrap", "200"])
    assert json.loads(paper.output.strip().splitlines()[-1])["pick_by"].startswith("crscore paper")


def two_diffs(candidates: tuple[tuple[str, float, int], ...]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Rows and similarity matrices of two diffs "a" and "b", each with the same candidates:
    (review, its one similarity to the one claim, its human rating)."""
    rows: list[dict[str, Any]] = []
    sims: list[Any] = []
    for diff in ("a", "b"):
        for review, sim, rel in candidates:
            rows.append({"diff": diff, "index": diff, "review": review,
                         "human": {"rel": rel, "con": rel, "comp": rel}})
            sims.append(([review], ["claim"], np.array([[sim]])))
    return rows, sims


def test_the_pick_is_fitted_by_training_gain_and_measured_on_the_held_out_rows() -> None:
    # two diffs; in each the longer review is people's best but CRScore puts it a little lower
    rows, sims = two_diffs((("short", 0.60, 2), ("a longer review that says more", 0.58, 5)))
    fit, figures = pick_fitter(sims, rows, RECIPES["rtcbot"])
    train = np.array([True, True, False, False])
    pick = fit(train)
    assert pick in PICKS and pick.margin > 0  # margin 0 takes the short one: worse than a random pick
    assert figures(pick, ~train) == {"gain_captured": 1.0, "top1_is_best": 1.0}
    assert figures(Pick(0.0, 1.5, 0.0), ~train) == {"gain_captured": -1.0, "top1_is_best": 0.0}


def test_the_fitted_pick_learns_a_penalty_for_reviews_that_ask() -> None:
    # two diffs; in each CRScore puts a question a little above a statement people rate higher
    rows, sims = two_diffs((("Shouldn't this be `size`?", 0.62, 1), ("Rename it to `size`.", 0.58, 4)))
    fit, figures = pick_fitter(sims, rows, RECIPES["rtcbot"])
    train = np.array([True, True, False, False])
    pick = fit(train)
    assert pick in PICKS and pick.asks > 0 and pick.margin == 0  # the penalty, not length, decides
    assert figures(pick, ~train) == {"gain_captured": 1.0, "top1_is_best": 1.0}
    assert figures(Pick(0.0, 1.5, 0.0), ~train) == {"gain_captured": -1.0, "top1_is_best": 0.0}
