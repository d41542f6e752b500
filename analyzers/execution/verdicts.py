"""How a run becomes a verdict (pure): its output compared with the expected one, and how it ended.

Verdicts (FixEval's): AC accepted, WA wrong answer, TLE time limit, MLE memory limit,
RE runtime error (a non-zero exit, a signal, a file or output limit), CE compile error.

- `tokens_match`: a stdin/stdout case's output against the expected output, by whitespace
  tokens, numbers within a tolerance (two integers exactly);
- `values_match`: a function case's returned value against the expected one (Python equality,
  numbers within the case's tolerance where it has one);
- `failure_verdict`: TLE / MLE / RE from how the sandboxed run ended, or None.

A case's verdict, with what its run gave back, is a `CaseResult`.
"""

from __future__ import annotations

import math
import re
import signal
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from analyzers.sandbox.run import Limits, RawRun

Verdict = Literal["AC", "WA", "TLE", "MLE", "RE", "CE"]
VERDICTS: tuple[Verdict, ...] = ("AC", "WA", "TLE", "MLE", "RE", "CE")


@dataclass(frozen=True)
class Tolerance:
    abs: float = 0.0
    rel: float = 0.0

    @classmethod
    def parse(cls, value: Any) -> Tolerance | None:
        """None, a number (absolute) or {"abs": …, "rel": …}."""
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls(abs=float(value))
        if isinstance(value, Mapping):
            return cls(abs=float(value.get("abs", 0.0) or 0.0), rel=float(value.get("rel", 0.0) or 0.0))
        raise ValueError(f"bad tolerance {value!r}")


OUTPUT_TOLERANCE = Tolerance(abs=1e-6, rel=1e-6)  # FixEval's 1e-6, relative as well


@dataclass
class CaseResult:
    verdict: Verdict
    detail: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_kb: int = 0
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""  # first 2,000 characters
    stderr: str = ""  # last 2,000 characters
    notes: list[str] = field(default_factory=list)
    cached: bool = False

    @property
    def passed(self) -> bool:
        return self.verdict == "AC"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- output comparison (pure) -----------------------------------------------------------------

_INT = re.compile(r"[+-]?\d+\Z")
_NUM = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\Z", re.I)


def _number(tok: str) -> float | None:
    return float(tok) if _NUM.match(tok) else None


def numbers_close(a: float, b: float, tol: Tolerance) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(tol.abs, tol.rel * max(abs(a), abs(b)))


def tokens_match(actual: str, expected: str, tol: Tolerance = OUTPUT_TOLERANCE) -> bool:
    """Same number of whitespace tokens; each pair equal as text, or both numbers within tol
    (two integers compare exactly, so big integers are not rounded through floats)."""
    a, e = actual.split(), expected.split()
    if len(a) != len(e):
        return False
    for x, y in zip(a, e, strict=True):
        if x == y:
            continue
        if _INT.match(x) and _INT.match(y):
            if int(x) != int(y):
                return False
            continue
        fx, fy = _number(x), _number(y)
        if fx is None or fy is None or not numbers_close(fx, fy, tol):
            return False
    return True


def values_match(actual: Any, expected: Any, tol: Tolerance | None = None) -> bool:
    """Python equality, numbers within tol where one is given (recursively in lists/dicts)."""
    if tol is not None:
        num = (int, float)
        if isinstance(actual, num) and isinstance(expected, num) and not isinstance(actual, bool) \
                and not isinstance(expected, bool):
            return numbers_close(float(actual), float(expected), tol)
        if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
            return len(actual) == len(expected) and all(
                values_match(x, y, tol) for x, y in zip(actual, expected, strict=True))
        if isinstance(actual, dict) and isinstance(expected, dict):
            return actual.keys() == expected.keys() and all(values_match(actual[k], expected[k], tol) for k in actual)
    if isinstance(actual, float) and isinstance(expected, float) and math.isnan(actual) and math.isnan(expected):
        return True
    try:
        return bool(actual == expected)
    except Exception:
        return False


# -- verdicts (pure) --------------------------------------------------------------------------

_MEMORY_MARKERS = ("MemoryError", "java.lang.OutOfMemoryError", "std::bad_alloc", "Cannot allocate memory")


def failure_verdict(run: RawRun, limits: Limits) -> tuple[Verdict, str] | None:
    """TLE / MLE / RE from how the run ended, or None when it exited 0 within its limits."""
    err = run.stderr.decode("utf-8", "replace")
    if run.timed_out:
        return "TLE", f"killed after {limits.wall_s:g} s wall time"
    if run.memory_exceeded:
        return "MLE", (f"memory limit of {limits.memory_mb} MB across the run's processes "
                       f"(killed at {run.peak_memory_kb >> 10} MB)")
    if run.disk_exceeded:
        return "RE", f"disk limit of {limits.disk_mb} MB"
    if run.signal == signal.SIGXCPU or (run.signal == signal.SIGKILL and run.cpu_s >= math.ceil(limits.cpu_s)):
        return "TLE", f"CPU time limit of {limits.cpu_s:g} s"
    failed = run.signal is not None or run.exit_code != 0
    if failed and any(m in err for m in _MEMORY_MARKERS):
        return "MLE", f"memory limit of {limits.memory_mb} MB"
    if failed and run.max_rss_kb >= 0.9 * (limits.memory_mb << 10):
        return "MLE", f"memory limit of {limits.memory_mb} MB (peak {run.max_rss_kb >> 10} MB)"
    if run.signal == signal.SIGXFSZ or (failed and "File too large" in err):
        return "RE", f"file size limit of {limits.fsize_mb} MB"
    if run.output_truncated:
        return "RE", f"output limit of {limits.output_kb} KB"
    if run.signal is not None:
        return "RE", f"killed by signal {signal.Signals(run.signal).name}"
    if run.exit_code != 0:
        last = err.strip().splitlines()[-1:] or [""]
        return "RE", f"exit code {run.exit_code}: {last[0][:200]}"
    return None
