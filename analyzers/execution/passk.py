"""Execution metrics (pure): pass@k, TCA@k and verdict histograms.

pass@k (Chen et al. 2021), unbiased: with n samples of which c pass all tests,
    pass@k = 1 − C(n−c, k) / C(n, k)  (1 when n − c < k).
It is defined only for k ≤ n: with fewer samples than k there is no k-subset to draw, and
clamping k to n would report pass@10 = 1.000 from one correct sample. So pass@k and TCA@k are
reported only for the k that every task's samples reach; the others are named as dropped.
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
    if k > n:
        raise ValueError(f"pass@{k} is undefined with {n} sample(s): the estimator needs k <= n")
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


def split_ks(ks: Sequence[int], n: int) -> tuple[list[int], list[int]]:
    """(the k that n samples per task can estimate, the k dropped because they exceed n)."""
    return [k for k in ks if k <= n], [k for k in ks if k > n]


def summarize(tasks: Mapping[str, Sequence[Sequence[str]]], ks: Sequence[int]) -> dict[str, object]:
    """Figures over tasks: n_tasks, the fewest samples of a task (`samples`), pass@k and tca@k
    (means over tasks) for each k up to that, the k left out (`dropped_k`, k > samples: see
    above), and the verdict histogram over every (sample, case)."""
    n = min((len(s) for s in tasks.values()), default=0)
    kept, dropped = split_ks(ks, n)
    figures: dict[str, object] = {"n_tasks": len(tasks), "samples": n}
    for k in kept:
        figures[f"pass@{k}"] = fmean(task_pass_at_k(s, k) for s in tasks.values())
    for k in kept:
        figures[f"tca@{k}"] = fmean(tca_at_k(s, k) for s in tasks.values())
    figures["dropped_k"] = dropped
    figures["verdicts"] = histogram(v for samples in tasks.values() for s in samples for v in s)
    return figures
