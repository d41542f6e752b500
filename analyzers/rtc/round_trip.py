"""Round-trip correctness (RTC), generic over the task: forward → backward → sim.

Paper eq. 1: RTC(x) ≈ 1/(N_f·N_b) Σ_y Σ_x̂ sim(x̂, x), with y ~ M(x) and x̂ ~ M⁻¹(y).
Lift: L(x) = RTC(x) − E_{x̂ ~ M⁻¹(ε)} sim(x̂, x), with ε an uninformative description.
RTC@k: the best forward sample among the first k (for a 0/1 sim: is any of them right).
The metric functions are pure; `round_trip` drives the two directions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Protocol, TypeVar

from analyzers.presentation import Regenerations
from analyzers.report import Finding

T = TypeVar("T")
R = TypeVar("R")

Sims = Sequence[Sequence[float]]  # per forward sample, per backward sample
# what a reader calls a round trip's scores, for the analyzers that report them (their `labels`)
LABELS = {"rtc": "RTC", "rtc@3": "RTC@3", "lift": "lift over the baseline", "baseline": "baseline RTC",
          "leaks": "descriptions leaking the code", "leak_rate": "leak rate"}
COUNTS = ("leaks",)  # of those, the ones that count things


def rtc_avg(sims: Sims) -> float:
    """Mean over forward samples of the mean over their backward samples (eq. 1)."""
    rows = [fmean(r) for r in sims if len(r)]
    return fmean(rows) if rows else 0.0


def rtc_at_k(sims: Sims, k: int) -> float:
    """The best per-forward-sample score among the first k forward samples."""
    rows = [fmean(r) for r in list(sims)[: max(k, 0)] if len(r)]
    return max(rows) if rows else 0.0


def baseline_avg(baseline_sims: Sequence[float]) -> float:
    return fmean(baseline_sims) if len(baseline_sims) else 0.0


def lift(sims: Sims, baseline_sims: Sequence[float]) -> float:
    return rtc_avg(sims) - baseline_avg(baseline_sims)


@dataclass
class RoundTrip:
    """One datapoint's round trip: the samples behind its scores, and the scores."""

    forward: list[str]
    backward: list[list[str]]
    baseline: list[str]
    sims: dict[str, list[list[float]]] = field(default_factory=dict)  # sim name → matrix
    baseline_sims: dict[str, list[float]] = field(default_factory=dict)
    # per forward sample: why its description leaks the answer (analyzers/rtc/leak.py), or None;
    # None for the whole list when descriptions were not checked
    leaks: list[str | None] | None = None

    def void_leaks(self, reasons: Sequence[str | None]) -> None:
        """Record each description's leak check and score a leaking one's regenerations 0 under
        every sim: a description that carries the answer is an invalid sample, a failed round
        trip (the baseline's description is ours, never checked). Call after the sims are set."""
        self.leaks = list(reasons)
        for matrix in self.sims.values():
            for i, why in enumerate(self.leaks):
                if why and i < len(matrix):
                    matrix[i] = [0.0] * len(matrix[i])

    def scores(self, primary: str, k: int | None = None) -> dict[str, float]:
        """rtc, rtc@k, baseline and lift on the primary sim; rtc_<name> for the others; leaks
        (how many descriptions leaked the answer) when they were checked."""
        k = k or len(self.forward)
        m, b = self.sims[primary], self.baseline_sims[primary]
        out = {
            "rtc": rtc_avg(m),
            f"rtc@{k}": rtc_at_k(m, k),
            "baseline": baseline_avg(b),
            "lift": lift(m, b),
        }
        for name, matrix in self.sims.items():
            if name != primary:
                out[f"rtc_{name}"] = rtc_avg(matrix)
        if self.leaks is not None:
            out["leaks"] = float(sum(1 for why in self.leaks if why))
        return out


class Mapper(Protocol):
    """Runs `fn` over `items` (concurrently, e.g. `LLMClient.map`), the results in order."""

    def __call__(self, fn: Callable[[T], R], items: list[T], /) -> list[R]: ...


def round_trip(
    forward: Callable[[], list[str]],
    backward: Callable[[str], list[str]],
    target: str,
    sims: Mapping[str, Callable[[str, str], float]],
    baseline_description: str,
    mapper: Mapper | None = None,
    leak: Callable[[str], str | None] | None = None,
) -> RoundTrip:
    """Sample descriptions, regenerate from each (and from the baseline), score each regeneration.

    With `leak` (description → why it reveals the target, or None) each description is checked,
    and one that leaks counts as a failed round trip (`RoundTrip.void_leaks`); it is regenerated
    all the same, so a run's requests do not depend on what the model wrote.

    Identical descriptions share one backward call (deterministic request counts). With a
    `mapper` the calls run concurrently, and the baseline's backward call, which needs no
    forward sample, runs beside the forward call: the second round then waits only on the
    descriptions' own regenerations.
    """
    if mapper is None:
        descriptions = forward()
        unique = list(dict.fromkeys([*descriptions, baseline_description]))
        by_desc = dict(zip(unique, [backward(d) for d in unique], strict=True))
    else:
        first = mapper(lambda step: forward() if step == 0 else backward(baseline_description), [0, 1])
        descriptions, by_desc = first[0], {baseline_description: first[1]}
        unique = [d for d in dict.fromkeys(descriptions) if d != baseline_description]
        by_desc.update(zip(unique, mapper(backward, unique), strict=True))
    back, base = [by_desc[d] for d in descriptions], by_desc[baseline_description]
    result = RoundTrip(forward=descriptions, backward=back, baseline=base)
    for name, sim in sims.items():
        result.sims[name] = [[sim(x, target) for x in row] for row in back]
        result.baseline_sims[name] = [sim(x, target) for x in base]
    if leak is not None:
        result.void_leaks([leak(d) for d in descriptions])
    return result


def aggregate(per_item: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each score over items (keys in first-seen order)."""
    keys: list[str] = []
    for s in per_item:
        keys += [k for k in s if k not in keys]
    return {k: fmean([s[k] for s in per_item if k in s]) for k in keys if any(k in s for s in per_item)}


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [v if isinstance(v, str) else "" for v in value]
    return []


def regenerations(f: Finding) -> Regenerations | None:
    """What a round trip's finding holds of the code its model wrote back: its evidence's
    `regenerated`, `descriptions` and `baseline_regenerated` (EditingRTC's and SynthesisRTC's)."""
    regenerated = _texts(f.evidence.get("regenerated"))
    if not regenerated:
        return None
    baseline = f.evidence.get("baseline_regenerated")
    return Regenerations(regenerated, _texts(f.evidence.get("descriptions")),
                         baseline if isinstance(baseline, str) else None)
