"""CRScore's three numbers for one review against its pseudo-references (paper §3).

- Review sentences: the review split on new lines, then on ". " and "? " (empty pieces
  dropped).
- ``S[i, j]`` = cosine similarity of review sentence i and pseudo-reference j.
- Con (conciseness, a precision) = share of review sentences whose best similarity to any
  pseudo-reference is strictly above τ.
- Comp (comprehensiveness, a recall) = share of pseudo-references whose best similarity to
  any review sentence is strictly above τ.
- Rel = harmonic mean of Con and Comp; 0 when both are 0.

τ belongs to the embedding model and pooling (see `analyzers/crscore/tau.json` and
`calibrate_tau`): the paper's recipe is the mean, over reference review sentences of
held-out diffs, of each sentence's best similarity to its own diff's pseudo-references.

The soft variant needs no threshold: Con = mean over sentences of their best similarity,
Comp = mean over pseudo-references of their best similarity (negative similarities count as
0), Rel = their harmonic mean — the greedy-matching precision / recall / F of BERTScore,
applied at sentence level. It keeps the graded information a threshold throws away.

The recipes (`recipe.py`): the soft scores can also count a similarity only above a floor
(rescaled above it) and weigh Comp in Rel (F-β); `Recipe` carries those, `tau` the paper's
threshold.

Edge cases: an empty review (no sentences) or no pseudo-references score 0 on every measure
(nothing said, or nothing to say it about) and `Scores.note` says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from analyzers.crscore.recipe import SOFT, Recipe, ends_asking, f_beta, graded

TAU_FILE = Path(__file__).with_name("tau.json")
_SPLIT = re.compile(r"\. |\? ")


def split_sentences(review: str) -> list[str]:
    """Review sentences: new lines first, then ". " and "? "; stripped, empty pieces dropped."""
    out: list[str] = []
    for line in review.splitlines():
        for piece in _SPLIT.split(line):
            piece = piece.strip()
            if piece:
                out.append(piece)
    return out


def harmonic(a: float, b: float) -> float:
    return 0.0 if a + b <= 0 else 2 * a * b / (a + b)


@dataclass
class Match:
    """A pseudo-reference and the review sentence closest to it."""

    pseudo_ref: str
    sentence: str | None
    similarity: float


@dataclass
class Scores:
    con: float
    comp: float
    rel: float
    tau: float | None  # None for the soft variant
    sentences: list[str] = field(default_factory=list)
    sentence_best: list[float] = field(default_factory=list)  # each sentence's best similarity
    matched: list[Match] = field(default_factory=list)  # pseudo-refs the review covers
    missed: list[Match] = field(default_factory=list)  # pseudo-refs it does not
    note: str = ""

    def as_dict(self) -> dict[str, float]:
        return {"con": self.con, "comp": self.comp, "rel": self.rel}

    def evidence(self) -> dict[str, Any]:
        return {
            "review_sentences": [
                {"sentence": s, "best_similarity": round(b, 4)}
                for s, b in zip(self.sentences, self.sentence_best, strict=True)
            ],
            "matched": [{"pseudo_ref": m.pseudo_ref, "by": m.sentence, "similarity": round(m.similarity, 4)}
                        for m in self.matched],
            "missed": [{"pseudo_ref": m.pseudo_ref, "closest": m.sentence, "similarity": round(m.similarity, 4)}
                       for m in self.missed],
        }


def score_matrix(sim: np.ndarray, sentences: Sequence[str], pseudo_refs: Sequence[str],
                 tau: float | None, recipe: Recipe = SOFT) -> Scores:
    """Scores from a similarity matrix of shape (len(sentences), len(pseudo_refs)).

    `tau=None` gives the soft, threshold-free variant, with `recipe`'s floor and β (the
    default: plain soft, harmonic mean). A pseudo-reference counts as matched when its best
    similarity is above τ (soft variant: above 0.5, for the evidence only).
    """
    sentences, pseudo_refs = list(sentences), list(pseudo_refs)
    if sim.shape != (len(sentences), len(pseudo_refs)):
        raise ValueError(f"similarity matrix {sim.shape} does not fit "
                         f"{len(sentences)} sentences × {len(pseudo_refs)} pseudo-references")
    if not sentences or not pseudo_refs:
        note = "empty review" if not sentences else "no pseudo-references for this change"
        return Scores(0.0, 0.0, 0.0, tau, sentences, [0.0] * len(sentences), [],
                      [Match(p, None, 0.0) for p in pseudo_refs], note)
    row_best = sim.max(axis=1)
    col_best = sim.max(axis=0)
    col_arg = sim.argmax(axis=0)
    if tau is None:
        con = float(graded(row_best, recipe.floor).mean())
        comp = float(graded(col_best, recipe.floor).mean())
        cut = 0.5
    else:
        con = float((row_best > tau).mean())
        comp = float((col_best > tau).mean())
        cut = tau
    matched: list[Match] = []
    missed: list[Match] = []
    for j, p in enumerate(pseudo_refs):
        m = Match(p, sentences[int(col_arg[j])], float(col_best[j]))
        (matched if col_best[j] > cut else missed).append(m)
    rel = harmonic(con, comp) if tau is not None else f_beta(con, comp, recipe.beta)
    return Scores(con, comp, rel, tau, sentences, [float(x) for x in row_best],
                  matched, missed)


# -- τ -------------------------------------------------------------------------------------
def tau_key(model: str, pooling: str) -> str:
    return f"{model}|{pooling}"


def load_taus(path: Path = TAU_FILE) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return dict(data.get("taus", {}))


def tau_for(model: str, pooling: str, path: Path = TAU_FILE) -> float | None:
    """The calibrated τ of (model, pooling) shipped with the package, or None."""
    entry = load_taus(path).get(tau_key(model, pooling))
    return float(entry["tau"]) if entry else None


def calibrate_tau(best_similarities: Sequence[float]) -> float:
    """The paper's recipe: the mean of each reference sentence's best similarity.

    Pass, for every sentence of the reference (human) reviews of held-out diffs, its highest
    similarity to the pseudo-references of its own diff.
    """
    if not best_similarities:
        raise ValueError("no reference review sentences to calibrate τ on")
    return float(np.mean(np.asarray(best_similarities, dtype=np.float64)))


class SupportsEmbed(Protocol):
    def embed(self, sentences: Sequence[str], progress: Callable[[int, int], None] | None = None
              ) -> np.ndarray: ...


Similarities = tuple[list[str], list[str], np.ndarray]  # sentences, pseudo-refs, matrix


def similarities(embedder: SupportsEmbed, items: Sequence[tuple[str, Sequence[str]]],
                 progress: Callable[[int, int], None] | None = None) -> list[Similarities]:
    """Each (review, pseudo-references) pair's sentences, pseudo-references and similarity
    matrix, with ONE embedding pass over all the distinct sentences."""
    split = [(split_sentences(review), [p.strip() for p in refs if p and p.strip()]) for review, refs in items]
    every = list(dict.fromkeys(s for sents, refs in split for s in (*sents, *refs)))
    vectors = embedder.embed(every, progress) if every else np.zeros((0, 0), dtype=np.float32)
    row = {s: i for i, s in enumerate(every)}
    out: list[Similarities] = []
    for sents, refs in split:
        if sents and refs:
            sim = vectors[[row[s] for s in sents]] @ vectors[[row[p] for p in refs]].T
        else:
            sim = np.zeros((len(sents), len(refs)), dtype=np.float32)
        out.append((sents, refs, sim))
    return out


def score_all(sims: Sequence[Similarities], tau: float | None, recipe: Recipe = SOFT) -> list[Scores]:
    """Scores of precomputed similarities (cheap: re-scoring with another recipe embeds nothing)."""
    return [score_matrix(sim, sents, refs, tau, recipe) for sents, refs, sim in sims]


def pick_value(scores: Scores, recipe: Recipe) -> float:
    """The score the review filter picks by: the Rel of `recipe.pick`'s floor and β, from what
    `scores` keeps of the matrix (each sentence's and each pseudo-reference's best
    similarity), less the pick's `asks` when the review ends with a question. A recipe with no
    `pick` picks by its own Rel."""
    if recipe.pick is None:
        return scores.rel
    cols = [m.similarity for m in (*scores.matched, *scores.missed)]
    if not scores.sentences or not cols:
        return 0.0
    con = float(graded(np.asarray(scores.sentence_best, dtype=np.float64), recipe.pick.floor).mean())
    comp = float(graded(np.asarray(cols, dtype=np.float64), recipe.pick.floor).mean())
    return recipe.pick.value(f_beta(con, comp, recipe.pick.beta), ends_asking(scores.sentences))


def score_reviews(embedder: SupportsEmbed, items: Sequence[tuple[str, Sequence[str]]],
                  tau: float | None, progress: Callable[[int, int], None] | None = None,
                  recipe: Recipe = SOFT) -> list[Scores]:
    """Score many (review, pseudo-references) pairs with ONE embedding pass over all sentences."""
    return score_all(similarities(embedder, items, progress), tau, recipe)
