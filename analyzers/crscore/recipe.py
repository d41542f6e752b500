"""How CRScore turns sentence similarities into Con / Comp / Rel, and how a pick is made.

Three recipes, all on the paper's frame (review sentences against claims + smells, greedy
best match per sentence and per pseudo-reference, Rel from Con and Comp):

- ``paper``: the paper's §3 — a similarity counts when it is above τ (Con and Comp are
  shares), Rel = harmonic mean. τ comes from tau.json or the calibration recipe.
- ``soft``: rtcbot's first default — the best similarities themselves (negatives 0),
  harmonic mean (BERTScore's greedy matching at sentence level).
- ``rtcbot`` (the default of the eval commands): soft, but a similarity at or below
  ``floor`` counts 0 and one above it counts ``(s − floor) / (1 − floor)`` (a soft τ: a
  small model's unrelated sentences sit around 0.1–0.2, not 0), and Rel is the F-β of Con
  and Comp with β = 2 (people's relevance follows coverage more than conciseness). Both were
  chosen by 5-fold cross-validation by diff on crscore-dev (docs/crscore.md): every held-out
  fold's training folds chose floor 0.2 and β 2 from `GRID`.

``pick_margin``: the review filter's top-1 is the longest (in words) of the candidates whose
Rel is within this margin of the best Rel (0 = the best Rel, first on ties). People rate a
review that says more higher when CRScore cannot tell two apart (docs/crscore.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class Recipe:
    name: str
    thresholded: bool = False  # paper: shares of similarities above τ
    floor: float = 0.0  # soft: similarities ≤ floor count 0, above it rescaled to [0, 1]
    beta: float = 1.0  # Rel = F-β of Con and Comp (1: harmonic mean)
    pick_margin: float = 0.0  # the filter's top-1: the longest within this much of the best Rel

    def with_params(self, floor: float, beta: float) -> Recipe:
        return replace(self, floor=floor, beta=beta)

    def describe(self) -> str:
        if self.thresholded:
            return "paper (shares above τ, harmonic mean)"
        return f"{self.name} (floor {self.floor:g}, β {self.beta:g})"


RECIPES: dict[str, Recipe] = {
    "rtcbot": Recipe("rtcbot", floor=0.2, beta=2.0, pick_margin=0.1),
    "soft": Recipe("soft"),
    "paper": Recipe("paper", thresholded=True),
}
DEFAULT_RECIPE = "rtcbot"
SOFT = RECIPES["soft"]

# What cross-validation may choose among for the rtcbot recipe (16 variants) and its margin.
FLOORS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3)
BETAS: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0)
GRID: tuple[tuple[float, float], ...] = tuple(itertools.product(FLOORS, BETAS))
MARGINS: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2)


def f_beta(con: float, comp: float, beta: float = 1.0) -> float:
    """F-β of a precision (Con) and a recall (Comp); 0 when both are 0."""
    b2 = beta * beta
    den = b2 * con + comp
    return 0.0 if den <= 0 else (1 + b2) * con * comp / den


def graded(sim: np.ndarray, floor: float) -> np.ndarray:
    """Similarities as credit: ≤ floor → 0, above → (s − floor) / (1 − floor)."""
    out: np.ndarray = np.clip((sim - floor) / (1.0 - floor), 0.0, None)
    return out


def pick_top(rels: Sequence[float], lengths: Sequence[int], margin: float) -> int:
    """The index of the filter's top-1: among the candidates within `margin` of the best Rel,
    the longest; the first of those on ties (so margin 0 is the best Rel, first on ties)."""
    if not rels:
        raise ValueError("no candidates to pick from")
    best = max(rels)
    near = [i for i, r in enumerate(rels) if r >= best - margin - 1e-12]
    return max(near, key=lambda i: (lengths[i], -i))
