"""The recipes' arithmetic: the floor, F-β and the filter's pick, on hand-made numbers."""

from __future__ import annotations

import numpy as np
import pytest

from analyzers.crscore import score as crs
from analyzers.crscore.recipe import (
    ASKS,
    GRID,
    MARGINS,
    PICKS,
    RECIPES,
    Pick,
    ends_asking,
    f_beta,
    graded,
    pick_order,
    pick_top,
)


def test_graded_counts_nothing_at_or_below_the_floor_and_rescales_above() -> None:
    got = graded(np.array([-0.3, 0.1, 0.2, 0.6, 1.0]), 0.2)
    assert got == pytest.approx([0.0, 0.0, 0.0, 0.5, 1.0])
    assert graded(np.array([-0.3, 0.4]), 0.0) == pytest.approx([0.0, 0.4])  # soft: negatives 0


def test_f_beta_weighs_comp_and_is_the_harmonic_mean_at_one() -> None:
    assert f_beta(0.2, 0.6) == pytest.approx(crs.harmonic(0.2, 0.6))
    assert f_beta(0.2, 0.6, 2.0) == pytest.approx(5 * 0.2 * 0.6 / (4 * 0.2 + 0.6))
    assert f_beta(0.2, 0.6, 2.0) > f_beta(0.6, 0.2, 2.0)  # coverage counts more than precision
    assert f_beta(0.0, 0.0, 2.0) == 0.0


def test_the_recipes_on_one_matrix() -> None:
    sim = np.array([[0.6, 0.1], [0.15, 0.3]])
    soft = crs.score_matrix(sim, ["a", "b"], ["p", "q"], None, RECIPES["soft"])
    assert (soft.con, soft.comp) == pytest.approx((0.45, 0.45))
    ours = crs.score_matrix(sim, ["a", "b"], ["p", "q"], None, RECIPES["rtcbot"])
    con = comp = (0.5 + 0.125) / 2  # (0.6 − 0.2) / 0.8 and (0.3 − 0.2) / 0.8
    assert (ours.con, ours.comp, ours.rel) == pytest.approx((con, comp, f_beta(con, comp, 2.0)))
    paper = crs.score_matrix(sim, ["a", "b"], ["p", "q"], 0.5, RECIPES["paper"])
    assert (paper.con, paper.comp, paper.rel) == pytest.approx((0.5, 0.5, 0.5))
    assert RECIPES["paper"].thresholded and not RECIPES["rtcbot"].thresholded


def test_pick_top_takes_the_longest_near_the_best() -> None:
    rels, words = [0.50, 0.45, 0.30, 0.50], [10, 40, 90, 10]
    assert pick_top(rels, words, 0.0) == 0  # the best Rel, first on ties
    assert pick_top(rels, words, 0.1) == 1  # 0.45 is near enough and says more
    assert pick_top(rels, words, 0.3) == 2
    with pytest.raises(ValueError):
        pick_top([], [], 0.1)


def test_pick_order_takes_pick_top_again_and_again() -> None:
    rels, words = [0.50, 0.45, 0.30, 0.50], [10, 40, 90, 10]
    assert pick_order(rels, words, 0.0) == [0, 3, 1, 2]
    assert pick_order(rels, words, 0.1) == [1, 0, 3, 2]  # then 0.5 / 0.5 (first on ties), then 0.30
    assert pick_order([], [], 0.1) == []


def test_the_rtcbot_pick_scores_with_its_own_floor_and_beta() -> None:
    rtcbot, soft = RECIPES["rtcbot"], RECIPES["soft"]
    assert rtcbot.pick == Pick(0.0, 1.5, 0.05, asks=0.1) and rtcbot.margin == 0.05
    assert soft.pick is None and soft.margin == 0.0
    assert (rtcbot.floor, rtcbot.beta) == (0.2, 2.0)  # the shown scores' recipe, not the pick's
    assert len(PICKS) == len(GRID) * len(ASKS) * len(MARGINS) == len(set(PICKS)) and rtcbot.pick in PICKS


def test_pick_value_is_the_picking_recipes_rel_from_what_scores_keep() -> None:
    sim = np.array([[0.6, 0.1, 0.05], [0.15, 0.3, -0.2]])
    rtcbot = RECIPES["rtcbot"]
    shown = crs.score_matrix(sim, ["a", "b"], ["p", "q", "r"], None, rtcbot)
    assert rtcbot.pick is not None
    picking = rtcbot.with_params(rtcbot.pick.floor, rtcbot.pick.beta)
    by = crs.score_matrix(sim, ["a", "b"], ["p", "q", "r"], None, picking)
    assert crs.pick_value(shown, rtcbot) == pytest.approx(by.rel)
    assert crs.pick_value(shown, rtcbot) != pytest.approx(shown.rel)  # another floor and β than shown
    assert crs.pick_value(shown, RECIPES["soft"]) == shown.rel  # no pick: the recipe's own Rel
    empty = crs.score_matrix(np.zeros((0, 2)), [], ["p", "q"], None, rtcbot)
    assert crs.pick_value(empty, rtcbot) == 0.0


def test_a_review_that_ends_with_a_question_asks() -> None:
    assert ends_asking(["The loop is off by one", "Shouldn't this be `i < n`?"])
    assert ends_asking(["Why public? "])
    assert not ends_asking(["Why public? This widens the API", "Keep it package-private."])  # asks, then says
    assert not ends_asking(["Is this needed?", "Drop it"]) and not ends_asking([])


def test_the_pick_takes_its_question_penalty_off_a_review_that_asks() -> None:
    sim = np.array([[0.6, 0.4]])
    rtcbot = RECIPES["rtcbot"]
    says = crs.score_matrix(sim, ["Rename it to `size`."], ["p", "q"], None, rtcbot)
    asks = crs.score_matrix(sim, ["Rename it to `size`?"], ["p", "q"], None, rtcbot)
    assert says.rel == asks.rel  # the shown scores do not change: only the pick's order
    assert crs.pick_value(asks, rtcbot) == pytest.approx(crs.pick_value(says, rtcbot) - 0.1)
    assert crs.pick_value(asks, RECIPES["soft"]) == asks.rel  # no pick, no penalty
    pick = Pick(0.0, 1.5, 0.05, asks=0.2)
    assert pick.value(0.5, ends_asking(["Why?"])) == pytest.approx(0.3)
    assert pick.value(np.array([0.5, 0.5]), np.array([True, False])) == pytest.approx([0.3, 0.5])  # as arrays
