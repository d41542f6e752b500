"""Confidence intervals of a proportion (pure): the acceptance rates (bot/app/feedback.py) and the
evaluations' plots (Fix % with intervals) use the same one."""

from __future__ import annotations

import math


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of k successes in n (None for n = 0); z = 1.96: 95 %."""
    if n <= 0:
        return None
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    r = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (round((c - r) / d, 4), round((c + r) / d, 4))
