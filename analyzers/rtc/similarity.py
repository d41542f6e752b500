"""Similarity of two texts (code or prose): exact, whitespace-normalised, chrF."""

from __future__ import annotations

import re

_WS = re.compile(r"\s+")


def exact(a: str, b: str) -> float:
    """The paper's EditingRTC sim: equality after stripping surrounding whitespace."""
    return 1.0 if a.strip() == b.strip() else 0.0


def normalise_ws(text: str) -> str:
    """Collapse every run of whitespace to one space (indentation and line breaks included)."""
    return _WS.sub(" ", text).strip()


def normalised(a: str, b: str) -> float:
    return 1.0 if normalise_ws(a) == normalise_ws(b) else 0.0


def chrf(hypothesis: str, reference: str) -> float:
    """chrF in [0, 1] (sacrebleu)."""
    from sacrebleu.metrics.chrf import CHRF

    if not hypothesis.strip() and not reference.strip():
        return 1.0
    return float(CHRF().sentence_score(hypothesis, [reference]).score) / 100.0


def load() -> None:
    """Import chrF's package now: sacrebleu imports portalocker, which imports redis (0.3-0.7 s
    of a fresh process, 340 modules with numpy's), so that a first round trip's score does
    not wait for it after the model's answers (EditingRTC's `ahead`)."""
    from sacrebleu.metrics.chrf import CHRF  # noqa: F401


SIMS = {"exact": exact, "normalised": normalised, "chrf": chrf}
