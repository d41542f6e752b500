"""How a run becomes a verdict: output comparison, returned values, how the run ended (pure)."""

from __future__ import annotations

import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers.execution.verdicts import Tolerance, failure_verdict, tokens_match, values_match
from analyzers.sandbox.run import Limits, RawRun

LIMITS = Limits(wall_s=4.0, cpu_s=2.0, memory_mb=256, fsize_mb=8, output_kb=1024, disk_mb=64)


def test_tokens_match_numbers_within_tolerance() -> None:
    assert tokens_match("1 2\n3\n", "1 2 3")
    assert tokens_match("0.3333333", "0.33333333")
    assert tokens_match("1e3", "1000.0000001")
    assert tokens_match("1E-7", "0")  # absolute 1e-6
    assert tokens_match("1000000001", "1000000001.0")
    assert not tokens_match("12345678901234567890", "12345678901234567891")  # ints compare exactly
    assert tokens_match("inf -INF nan", "Infinity -inf NaN")
    assert not tokens_match("inf", "-inf")
    assert not tokens_match("nan", "0")
    assert not tokens_match("0.1", "0.2")
    assert not tokens_match("1 2", "1 2 3")
    assert not tokens_match("abc", "abd")
    assert tokens_match("100.5", "100.6", Tolerance(rel=0.01))
    assert not tokens_match("1_000", "1000")  # not a number token


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_tokens_match_accepts_its_own_repr(x: float) -> None:
    assert tokens_match(repr(x), f"{x:.17g}")
    assert tokens_match(f"{x} {x}", f"{x}\n{x}\n")


def test_values_match_with_and_without_tolerance() -> None:
    assert values_match([1, [2, 3]], [1, [2, 3]])
    assert not values_match([1, 2], [2, 1])
    assert values_match(4.0, 4)
    assert values_match([0.1 + 0.2], [0.3], Tolerance(abs=1e-9))
    assert not values_match([0.1 + 0.2], [0.3])
    assert values_match({"a": 1.0000001}, {"a": 1}, Tolerance(abs=1e-3))
    assert not values_match([1.0, 2.0], [1.0], Tolerance(abs=1))


def test_tolerance_parse() -> None:
    assert Tolerance.parse(None) is None
    assert Tolerance.parse(0.5) == Tolerance(abs=0.5)
    assert Tolerance.parse({"rel": 0.01}) == Tolerance(rel=0.01)
    with pytest.raises(ValueError, match="bad tolerance"):
        Tolerance.parse(True)


def _run(**kw: object) -> RawRun:
    base: dict[str, object] = {"exit_code": 0, "signal": None, "wall_s": 0.1, "cpu_s": 0.1, "max_rss_kb": 1024,
                               "stdout": b"", "stderr": b"", "timed_out": False, "output_truncated": False,
                               "network_isolated": True, "notes": []}
    return RawRun(**{**base, **kw})  # type: ignore[arg-type]


def test_failure_verdict_from_how_the_run_ended() -> None:
    assert failure_verdict(_run(), LIMITS) is None
    assert failure_verdict(_run(timed_out=True), LIMITS) == ("TLE", "killed after 4 s wall time")
    assert failure_verdict(_run(signal=signal.SIGXCPU, exit_code=None), LIMITS) == ("TLE", "CPU time limit of 2 s")
    assert failure_verdict(_run(memory_exceeded=True, peak_memory_kb=300 << 10), LIMITS) == (
        "MLE", "memory limit of 256 MB across the run's processes (killed at 300 MB)")
    assert failure_verdict(_run(exit_code=1, stderr=b"Traceback\nMemoryError\n"), LIMITS) == (
        "MLE", "memory limit of 256 MB")
    assert failure_verdict(_run(disk_exceeded=True), LIMITS) == ("RE", "disk limit of 64 MB")
    assert failure_verdict(_run(output_truncated=True), LIMITS) == ("RE", "output limit of 1024 KB")
    assert failure_verdict(_run(exit_code=2, stderr=b"boom\nValueError: x\n"), LIMITS) == (
        "RE", "exit code 2: ValueError: x")
    assert failure_verdict(_run(exit_code=None, signal=signal.SIGSEGV), LIMITS) == ("RE", "killed by signal SIGSEGV")
