from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given
from hypothesis import strategies as st

from analyzers.rtc.round_trip import aggregate, baseline_avg, lift, round_trip, rtc_at_k, rtc_avg

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
matrix = st.lists(st.lists(unit, min_size=1, max_size=4), min_size=1, max_size=6)


@given(matrix)
def test_rtc_avg_is_mean_of_row_means_and_bounded(m: list[list[float]]) -> None:
    v = rtc_avg(m)
    assert 0.0 <= v <= 1.0 + 1e-12
    assert min(sum(r) / len(r) for r in m) - 1e-12 <= v <= max(sum(r) / len(r) for r in m) + 1e-12


@given(matrix, st.integers(min_value=1, max_value=8))
def test_rtc_at_k_is_monotone_in_k_and_at_least_first_row(m: list[list[float]], k: int) -> None:
    assert rtc_at_k(m, k) <= rtc_at_k(m, k + 1) + 1e-12
    assert rtc_at_k(m, k) >= sum(m[0]) / len(m[0]) - 1e-12
    assert rtc_at_k(m, len(m)) >= rtc_avg(m) - 1e-12


@given(matrix, st.lists(unit, min_size=1, max_size=3))
def test_lift_is_rtc_minus_baseline(m: list[list[float]], b: list[float]) -> None:
    assert abs(lift(m, b) - (rtc_avg(m) - baseline_avg(b))) < 1e-12
    assert -1.0 - 1e-12 <= lift(m, b) <= 1.0 + 1e-12


def test_binary_example_from_the_paper_shape() -> None:
    m = [[0.0], [1.0], [0.0]]  # one of three descriptions led back to the original
    assert abs(rtc_avg(m) - 1 / 3) < 1e-12
    assert rtc_at_k(m, 1) == 0.0 and rtc_at_k(m, 2) == 1.0
    assert lift(m, [0.0]) == rtc_avg(m)


def test_empty_inputs() -> None:
    assert rtc_avg([]) == 0.0 and rtc_at_k([], 3) == 0.0 and baseline_avg([]) == 0.0
    assert aggregate([]) == {}


def test_round_trip_drives_both_directions() -> None:
    trip = round_trip(
        forward=lambda: ["good", "bad"],
        backward=lambda d: ["X" if d == "good" else "Y"],
        target="X",
        sims={"exact": lambda a, b: float(a == b)},
        baseline_description="Edit.",
    )
    assert trip.sims["exact"] == [[1.0], [0.0]] and trip.baseline_sims["exact"] == [0.0]
    s = trip.scores("exact")
    assert s["rtc"] == 0.5 and s["rtc@2"] == 1.0 and s["lift"] == 0.5


def test_round_trip_with_a_mapper_regenerates_the_baseline_beside_the_forward_call() -> None:
    """The baseline's regeneration needs no forward sample: it is asked while the forward call
    is still out (the forward call here waits for it), and a description equal to the baseline
    shares its call."""
    baseline_asked = threading.Event()
    calls: list[str] = []

    def forward() -> list[str]:
        # a generous bound (only a failure waits it out): a loaded machine may start the thread late
        assert baseline_asked.wait(30), "the baseline was not regenerated beside the forward call"
        return ["good", "Edit.", "good"]

    def backward(d: str) -> list[str]:
        calls.append(d)
        if d == "Edit.":
            baseline_asked.set()
        return ["X" if d == "good" else "Y"]

    def mapper(fn, items):  # type: ignore[no-untyped-def]
        with ThreadPoolExecutor(max_workers=len(items)) as ex:
            return list(ex.map(fn, items))

    trip = round_trip(forward, backward, "X", {"exact": lambda a, b: float(a == b)}, "Edit.", mapper=mapper)
    assert sorted(calls) == ["Edit.", "good"]  # one call per distinct description
    assert trip.sims["exact"] == [[1.0], [0.0], [1.0]] and trip.baseline_sims["exact"] == [0.0]
    assert trip.forward == ["good", "Edit.", "good"] and trip.baseline == ["Y"]
