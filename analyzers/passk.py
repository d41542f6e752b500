"""Execution metrics (pure): pass@k, TCA@k and verdict histograms.

pass@k (Chen et al. 2021), unbiased: with n samples of which c pass all tests,
    pass@k = 1 − C(n−c, k) / C(n, k)  (1 when n − c < k).
TCA@k (FixEval): the mean share of test cases passed over the first k samples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean

VERDICT_ORDER: tuple[str, ...] = ("AC", "WA", "TLE", "MLE", "RE", "CE")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) is correct."""
    if n < 0 or c < 0 or c > n or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if n == 0:
        return 0.0
    k = min(k, n)  # fewer samples than k: the estimate for k = n
    if n - c < k:
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i): numerically stable, no big binomials
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def sample_passed(verdicts: Sequence[str]) -> bool:
    """A sample is correct when every test case is AC (and it has at least one case)."""
    return bool(verdicts) and all(v == "AC" for v in verdicts)


def case_share(verdicts: Sequence[str]) -> float:
    return sum(v == "AC" for v in verdicts) / len(verdicts) if verdicts else 0.0


def task_pass_at_k(samples: Sequence[Sequence[str]], k: int) -> float:
    """pass@k for one task from its samples' per-case verdicts."""
    return pass_at_k(len(samples), sum(sample_passed(s) for s in samples), k)


def tca_at_k(samples: Sequence[Sequence[str]], k: int) -> float:
    """Mean share of test cases passed over the first k samples of one task."""
    first = list(samples)[: max(k, 0)]
    return fmean(case_share(s) for s in first) if first else 0.0


def histogram(verdicts: Iterable[str]) -> dict[str, int]:
    """Counts per verdict, in the usual order, every verdict present (zeros included)."""
    counts = Counter(verdicts)
    out = {v: counts.get(v, 0) for v in VERDICT_ORDER}
    out.update({v: n for v, n in counts.items() if v not in out})
    return out


def summarize(tasks: Mapping[str, Sequence[Sequence[str]]], ks: Sequence[int]) -> dict[str, object]:
    """Figures over tasks: n_tasks, pass@k and tca@k (means over tasks), verdict histogram
    over every (sample, case)."""
    figures: dict[str, object] = {"n_tasks": len(tasks)}
    for k in ks:
        figures[f"pass@{k}"] = fmean(task_pass_at_k(s, k) for s in tasks.values()) if tasks else 0.0
    for k in ks:
        figures[f"tca@{k}"] = fmean(tca_at_k(s, k) for s in tasks.values()) if tasks else 0.0
    figures["verdicts"] = histogram(v for samples in tasks.values() for s in samples for v in s)
    return figures
