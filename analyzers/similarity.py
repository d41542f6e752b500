"""Similarity of two texts (code or prose): exact, whitespace-normalised, chrF, BLEU, TF-IDF cosine."""

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


def bleu(hypothesis: str, reference: str) -> float:
    """Sentence BLEU in [0, 1] (sacrebleu, exponential smoothing)."""
    from sacrebleu.metrics.bleu import BLEU

    return float(BLEU(effective_order=True).sentence_score(hypothesis, [reference]).score) / 100.0


def tfidf_cosine(a: str, b: str) -> float:
    """TF-IDF cosine with English stop words, as optillm's RTC evaluation uses."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    try:
        m = TfidfVectorizer(stop_words="english").fit_transform([a, b])
    except ValueError:  # only stop words, or empty
        return 1.0 if a.strip() == b.strip() else 0.0
    return float(cosine_similarity(m[0], m[1])[0, 0])


SIMS = {"exact": exact, "normalised": normalised, "chrf": chrf}
