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

``Pick``: how the review filter chooses among candidates. It scores them with its own floor
and β (the figure it is judged by is the top-1's human rating, not a correlation over all
reviews), takes ``asks`` off the pick score of a candidate that ends with a question (people
rate a comment that asks lower than one that says: 1.67 against 2.05 on crscore-dev), then
takes the longest (in words) of those whose pick score is within ``margin`` of the best
(margin 0: the best, first on ties): people rate a review that says more higher when CRScore
cannot tell two apart. The rtcbot pick (floor 0, β 1.5, asks 0.1, margin 0.05) is what every
fold's training diffs chose from `PICKS` (`GRID` × `ASKS` × `MARGINS`) by training gain
(docs/crscore.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import overload

import numpy as np


@dataclass(frozen=True)
class Pick:
    """The review filter's choice: candidates scored with this floor and β (as a soft recipe),
    `asks` taken off a candidate that ends with a question, then the longest within `margin`
    of the best."""

    floor: float = 0.0
    beta: float = 1.0
    margin: float = 0.0
    asks: float = 0.0

    def describe(self) -> str:
        return f"floor {self.floor:g}, β {self.beta:g}, a question −{self.asks:g}, margin {self.margin:g}"

    @overload
    def value(self, rel: float, asking: bool) -> float: ...
    @overload
    def value(self, rel: np.ndarray, asking: np.ndarray) -> np.ndarray: ...

    def value(self, rel: float | np.ndarray, asking: bool | np.ndarray) -> float | np.ndarray:
        """The pick score: `rel` (the Rel of this floor and β) less `asks` where the candidate
        ends with a question (`asking`, by `ends_asking`); one candidate, or arrays of them."""
        return rel - self.asks * asking


BY_REL = Pick()  # the recipe's own Rel, best first (the soft and paper recipes)


@dataclass(frozen=True)
class Recipe:
    name: str
    thresholded: bool = False  # paper: shares of similarities above τ
    floor: float = 0.0  # soft: similarities ≤ floor count 0, above it rescaled to [0, 1]
    beta: float = 1.0  # Rel = F-β of Con and Comp (1: harmonic mean)
    pick: Pick | None = None  # the filter's own scores and margin; None: by this recipe's Rel, best first

    def with_params(self, floor: float, beta: float) -> Recipe:
        return replace(self, floor=floor, beta=beta)

    @property
    def margin(self) -> float:
        return 0.0 if self.pick is None else self.pick.margin

    def describe(self) -> str:
        if self.thresholded:
            return "paper (shares above τ, harmonic mean)"
        return f"{self.name} (floor {self.floor:g}, β {self.beta:g})"


RECIPES: dict[str, Recipe] = {
    "rtcbot": Recipe("rtcbot", floor=0.2, beta=2.0, pick=Pick(0.0, 1.5, 0.05, asks=0.1)),
    "soft": Recipe("soft"),
    "paper": Recipe("paper", thresholded=True),
}
DEFAULT_RECIPE = "rtcbot"
SOFT = RECIPES["soft"]

# What cross-validation may choose among for the rtcbot recipe (16 variants) and its pick
# (the 16 × the question penalties × the margins).
FLOORS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3)
BETAS: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0)
GRID: tuple[tuple[float, float], ...] = tuple(itertools.product(FLOORS, BETAS))
MARGINS: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2)
ASKS: tuple[float, ...] = (0.0, 0.1, 0.2)
PICKS: tuple[Pick, ...] = tuple(Pick(f, b, m, a) for f, b in GRID for a in ASKS for m in MARGINS)


def ends_asking(sentences: Sequence[str]) -> bool:
    """Whether a review (its sentences, in order) ends with a question: it asks rather than says."""
    return bool(sentences) and sentences[-1].rstrip().endswith("?")


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


def pick_order(values: Sequence[float], lengths: Sequence[int], margin: float) -> list[int]:
    """Every index in the filter's order: `pick_top` of the candidates left, again and again."""
    left = list(range(len(values)))
    out: list[int] = []
    while left:
        i = left[pick_top([values[j] for j in left], [lengths[j] for j in left], margin)]
        out.append(i)
        left.remove(i)
    return out
