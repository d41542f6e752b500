from __future__ import annotations

import itertools
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers.execution.passk import (
    VERDICT_ORDER,
    histogram,
    pass_at_k,
    summarize,
    task_pass_at_k,
    tca_at_k,
)


def brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Share of all k-subsets of n samples (c correct) that hold a correct one."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_equals_the_share_of_subsets_with_a_correct_sample(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(n, c, k))


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_matches_the_binomial_formula(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    exact = 1.0 if n - c < k else 1 - comb(n - c, k) / comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-9)


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_bounds_and_monotone_in_k_and_c(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    p = pass_at_k(n, c, k)
    assert 0.0 <= p <= 1.0
    if k < n:
        assert pass_at_k(n, c, k + 1) >= p - 1e-12
    if c < n:
        assert pass_at_k(n, c + 1, k) >= p - 1e-12
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)
    assert (p == 0.0) == (c == 0)


def test_pass_at_k_edge_cases() -> None:
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(2, 1, 2) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


verdict = st.sampled_from(VERDICT_ORDER)
samples_st = st.lists(st.lists(verdict, min_size=1, max_size=6), min_size=1, max_size=8)


@given(samples_st, st.integers(1, 10))
def test_tca_is_a_mean_share_and_task_pass_agrees(samples: list[list[str]], k: int) -> None:
    tca = tca_at_k(samples, k)
    first = samples[:k]
    assert tca == pytest.approx(sum(s.count("AC") / len(s) for s in first) / len(first))
    assert 0.0 <= tca <= 1.0
    if k > len(samples):
        return
    p = task_pass_at_k(samples, k)
    if any(all(v == "AC" for v in s) for s in samples):
        assert p > 0
    else:
        assert p == 0.0


@given(st.lists(verdict, max_size=50))
def test_histogram_counts_every_verdict(vs: list[str]) -> None:
    h = histogram(vs)
    assert list(h)[:6] == list(VERDICT_ORDER)
    assert sum(h.values()) == len(vs)
    for v in VERDICT_ORDER:
        assert h[v] == vs.count(v)


def test_summarize_over_tasks() -> None:
    tasks = {
        "a": [["AC", "AC"], ["WA", "AC"], ["TLE", "TLE"]],  # 1 of 3 correct
        "b": [["CE"], ["CE"], ["CE"]],
    }
    fig = summarize(tasks, [1, 3])
    assert fig["n_tasks"] == 2
    assert fig["pass@1"] == pytest.approx((1 / 3 + 0) / 2)
    assert fig["pass@3"] == pytest.approx((1.0 + 0) / 2)
    assert fig["tca@1"] == pytest.approx((1.0 + 0) / 2)
    assert fig["tca@3"] == pytest.approx(((1 + 0.5 + 0) / 3 + 0) / 2)
    assert fig["verdicts"] == {"AC": 3, "WA": 1, "TLE": 2, "MLE": 0, "RE": 0, "CE": 3}


@pytest.mark.parametrize(("n", "c", "k"), [(1, 1, 10), (2, 1, 5), (0, 0, 1), (3, 0, 4)])
def test_pass_at_k_is_undefined_beyond_the_samples(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match=f"pass@{k} is undefined with {n} sample"):
        pass_at_k(n, c, k)


def test_summarize_drops_the_k_a_task_has_too_few_samples_for() -> None:
    tasks = {"a": [["AC"]], "b": [["WA"], ["AC"], ["AC"]]}  # the fewest samples: 1
    fig = summarize(tasks, [1, 3, 10])
    assert fig["samples"] == 1 and fig["dropped_k"] == [3, 10]
    assert [key for key in fig if "@" in key] == ["pass@1", "tca@1"]
    assert fig["pass@1"] == pytest.approx((1.0 + 2 / 3) / 2)
    assert summarize({}, [1]) == {"n_tasks": 0, "samples": 0, "dropped_k": [1],
                                  "verdicts": histogram([])}
