"""tests/hypothesis_profiles.py: the profiles drop Hypothesis' wall-clock checks, nothing else.

A slow machine is stood in for by a strategy and a test body that sleep: Hypothesis' own
`default` profile fails them (the contrast that shows the check is real), `steady` and `ci` run
them to the end (marked slow: seconds of sleep)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import DeadlineExceeded, FailedHealthCheck

from tests import hypothesis_profiles

hypothesis_profiles.register()  # idempotent: tests/conftest.py did the same
DRAW_S = 0.15  # 10 draws of it: 1.5 s, over the 1 s the too_slow check allows
BODY_S = 0.3  # over the 200 ms default deadline


def slow_draw(x: int) -> int:
    time.sleep(DRAW_S)
    return x


def property_with_slow_draws(profile: str) -> Callable[[], None]:
    @settings(settings.get_profile(profile), max_examples=10, database=None)
    @given(st.integers(0, 9).map(slow_draw))
    def prop(x: int) -> None:
        assert 0 <= x <= 9

    return prop


def property_with_slow_body(profile: str) -> Callable[[], None]:
    @settings(settings.get_profile(profile), max_examples=2, database=None)
    @given(st.integers(0, 9))
    def prop(x: int) -> None:
        time.sleep(BODY_S)
        assert 0 <= x <= 9

    return prop


@pytest.mark.slow  # seconds of sleeping draws and examples
def test_hypothesis_default_fails_slow_generation_and_slow_examples() -> None:
    with pytest.raises(FailedHealthCheck, match="generation is slow"):
        property_with_slow_draws("default")()
    with pytest.raises(DeadlineExceeded):
        property_with_slow_body("default")()


@pytest.mark.slow
@pytest.mark.parametrize("profile", hypothesis_profiles.PROFILES)
def test_profiles_run_slow_generation_and_slow_examples_to_the_end(profile: str) -> None:
    property_with_slow_draws(profile)()
    property_with_slow_body(profile)()


@pytest.mark.parametrize("profile,parent", [("steady", "default"), ("ci", "ci")])
def test_profiles_keep_every_other_setting(profile: str, parent: str) -> None:
    ours, theirs = settings.get_profile(profile), settings.get_profile(parent)
    assert ours.deadline is None and HealthCheck.too_slow in ours.suppress_health_check
    assert HealthCheck.data_too_large not in ours.suppress_health_check
    assert HealthCheck.filter_too_much not in ours.suppress_health_check
    for name in ("max_examples", "derandomize", "database", "phases", "stateful_step_count", "print_blob"):
        assert getattr(ours, name) == getattr(theirs, name), name


@pytest.mark.parametrize("environ,name", [
    ({}, "steady"), ({"CI": "true"}, "ci"), ({"CI": "1"}, "ci"), ({"CI": "false"}, "steady"),
    ({"CI": "true", "HYPOTHESIS_PROFILE": "default"}, "default"),
])
def test_the_profile_chosen_from_the_environment(environ: dict[str, str], name: str) -> None:
    assert hypothesis_profiles.chosen(environ) == name


def test_this_run_loaded_a_profile_without_timing_checks() -> None:
    active = settings()  # a settings object starts from the loaded profile
    assert active.deadline is None
    assert HealthCheck.too_slow in active.suppress_health_check


def test_the_check_profile_is_steady_with_fewer_examples_and_examples_follows_the_loaded_one() -> None:
    check, steady = settings.get_profile("check"), settings.get_profile("steady")
    assert check.max_examples == hypothesis_profiles.CHECK_EXAMPLES < steady.max_examples
    for name in ("deadline", "suppress_health_check", "derandomize", "database", "phases"):
        assert getattr(check, name) == getattr(steady, name), name
    loaded = hypothesis_profiles.chosen(os.environ)
    try:
        assert hypothesis_profiles.load({"HYPOTHESIS_PROFILE": "check"}) == "check"
        assert hypothesis_profiles.examples(150) == hypothesis_profiles.CHECK_EXAMPLES
        assert hypothesis_profiles.examples(3) == 3
        for name in ("steady", "ci"):
            hypothesis_profiles.load({"HYPOTHESIS_PROFILE": name})
            assert hypothesis_profiles.examples(150) == 150, name
    finally:
        hypothesis_profiles.load({"HYPOTHESIS_PROFILE": loaded})
