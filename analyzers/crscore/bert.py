"""A BERT sentence encoder in numpy: all-MiniLM-L6-v2 without torch or sentence-transformers.

Importing sentence-transformers (torch, transformers, scikit-learn) takes most of the 6-9 s a
fresh process spent loading the embedding model, for a 6-layer BERT whose forward pass is a few
matrix products. This reads the same files (the model's `model.safetensors` with safetensors'
numpy API, its `tokenizer.json` with the `tokenizers` library, both installed with
transformers) and computes the same token embeddings in float32: the embeddings, six encoder
layers (self-attention, GELU feed-forward, post-layer normalisation), as BertModel does in
evaluation. tests/analyzers/crscore/test_bert.py checks it against SentenceTransformer.

Only a folder laid out as sentence-transformers saves a plain BERT with mean pooling and
normalisation (`fits`) is read here; any other model goes through sentence-transformers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

MODULES = ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
           "sentence_transformers.models.Normalize"]
DEFAULT_MAX_SEQ_LENGTH = 512

# erfc(z) for z ≥ 0 to a relative error below 1.2e-7 (Numerical Recipes' `erfcc`, a Chebyshev
# fit): GELU's exact form without scipy (whose import costs seconds) or torch
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
         1.48851587, -0.82215223, 0.17087277)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def fits(folder: Path) -> bool:
    """Whether `folder` holds a BERT this module reads: a Transformer (model_type bert,
    absolute positions, GELU), mean pooling, normalisation, weights in model.safetensors."""
    try:
        modules = [m["type"] for m in _read_json(folder / "modules.json")]
        config = _read_json(folder / "config.json")
        pooling = _read_json(folder / "1_Pooling" / "config.json")
    except (OSError, ValueError, KeyError, TypeError):
        return False
    means = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    return (modules == MODULES and config.get("model_type") == "bert" and config.get("hidden_act") == "gelu"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and means == ["pooling_mode_mean_tokens"]
            and (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file())


def gelu(x: np.ndarray) -> np.ndarray:
    """x·Φ(x) = x/2 · erfc(-x/√2), in place on `x`'s copy (float32)."""
    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1 / (1 + np.float32(0.5) * z)
    poly = np.full_like(t, _ERFC[-1])
    for c in _ERFC[-2::-1]:
        poly *= t
        poly += np.float32(c)
    poly -= z * z
    erfc_abs = t * np.exp(poly)  # erfc(|x|/√2)
    erfc = np.where(x >= 0, 2 - erfc_abs, erfc_abs)  # erfc(-x/√2)
    out: np.ndarray = np.float32(0.5) * x * erfc
    return out


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    out: np.ndarray = centred / np.sqrt(var + np.float32(eps)) * weight + bias
    return out


class Layer:
    """One encoder layer's weights, transposed for `x @ w` (query, key and value as one)."""

    def __init__(self, w: dict[str, np.ndarray], prefix: str) -> None:
        att = prefix + "attention."
        self.qkv = np.ascontiguousarray(np.concatenate(
            [w[f"{att}self.{n}.weight"] for n in ("query", "key", "value")]).T)
        self.qkv_bias = np.concatenate([w[f"{att}self.{n}.bias"] for n in ("query", "key", "value")])
        self.out, self.out_bias = np.ascontiguousarray(w[f"{att}output.dense.weight"].T), w[f"{att}output.dense.bias"]
        self.ln1 = (w[f"{att}output.LayerNorm.weight"], w[f"{att}output.LayerNorm.bias"])
        self.up = np.ascontiguousarray(w[f"{prefix}intermediate.dense.weight"].T)
        self.up_bias = w[f"{prefix}intermediate.dense.bias"]
        self.down = np.ascontiguousarray(w[f"{prefix}output.dense.weight"].T)
        self.down_bias = w[f"{prefix}output.dense.bias"]
        self.ln2 = (w[f"{prefix}output.LayerNorm.weight"], w[f"{prefix}output.LayerNorm.bias"])


class BertEncoder:
    """Token embeddings of a BERT read from a sentence-transformers folder (see `fits`)."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = _read_json(folder / "config.json")
        st_config = folder / "sentence_bert_config.json"
        limit = _read_json(st_config).get("max_seq_length") if st_config.is_file() else None
        self.max_seq_length = int(min(limit or DEFAULT_MAX_SEQ_LENGTH, config["max_position_embeddings"]))
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_seq_length)
        special = _read_json(folder / "special_tokens_map.json") if (folder / "special_tokens_map.json").is_file() \
            else {}
        self.special_tokens = {str(v if isinstance(v, str) else v.get("content")) for v in special.values()}
        self.pad_id = int(config.get("pad_token_id", 0))
        w = load_file(str(folder / "model.safetensors"))
        w = {k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in w.items()}
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [Layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]
        self.dimension = int(config["hidden_size"])

    def encode_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Each sentence's token ids ([CLS] … [SEP], truncated to `max_seq_length`)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(sentences))]

    def tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.tokenizer.id_to_token(i) or "" for i in ids]

    def forward(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(token embeddings (B, T, H), attention mask (B, T), ids (B, T)), padded on the right."""
        encoded = self.encode_ids(sentences)
        width = max(len(e) for e in encoded)
        ids = np.full((len(encoded), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for i, e in enumerate(encoded):
            ids[i, :len(e)] = e
            mask[i, :len(e)] = 1
        return self.token_embeddings(ids, mask), mask, ids

    def token_embeddings(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        b, t = ids.shape
        x = layer_norm(self.words[ids] + self.positions[:t] + self.token_type, *self.ln, self.eps)
        bias = np.where(mask[:, None, None, :] > 0, np.float32(0), np.finfo(np.float32).min).astype(np.float32)
        h = self.heads
        d = self.dimension // h
        scale = np.float32(1 / np.sqrt(d))
        x = x.reshape(b * t, self.dimension)  # the linear layers as one 2-D product each (BLAS)
        for layer in self.layers:
            qkv = (x @ layer.qkv + layer.qkv_bias).reshape(b, t, 3, h, d).transpose(2, 0, 3, 1, 4)
            q, k, v = (np.ascontiguousarray(m) for m in qkv)  # (B, heads, T, d); strided stacks skip BLAS
            scores = (q * scale) @ k.transpose(0, 1, 3, 2) + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * t, self.dimension)
            x = layer_norm(ctx @ layer.out + layer.out_bias + x, *layer.ln1, self.eps)
            up = gelu(x @ layer.up + layer.up_bias)
            x = layer_norm(up @ layer.down + layer.down_bias + x, *layer.ln2, self.eps)
        out: np.ndarray = x.reshape(b, t, self.dimension)
        return out

    def mean_pooled(self, sentences: Sequence[str]) -> np.ndarray:
        """The model's own pooling: the mean of the token embeddings over the attention mask."""
        emb, mask, _ = self.forward(sentences)
        m = mask[:, :, None].astype(np.float32)
        pooled: np.ndarray = (emb * m).sum(axis=1) / np.maximum(m.sum(axis=1), np.float32(1e-9))
        return pooled
