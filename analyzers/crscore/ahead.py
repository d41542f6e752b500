"""The embedding work CRScore does ahead of scoring, while its claims requests are out: the
model's load (a fresh process's start) and the embeddings of the comments and the smells (the
embedder keeps them). A failure here is left for the scoring to report."""

from __future__ import annotations

from collections.abc import Callable

from analyzers.crscore import score as crs
from analyzers.crscore.sts import Embedder, EmbeddingError, shared_embedder


def pre_embed(model: str, pooling: str, reviews: list[str], smells: list[str]) -> None:
    """Embed the review sentences and the smells ahead of scoring (the embedder keeps them)."""
    sentences = [s for r in reviews for s in crs.split_sentences(r)] + [s.strip() for s in smells if s.strip()]
    _ahead(model, pooling, lambda embedder: embedder.embed(list(dict.fromkeys(sentences))))


def load_model(model: str, pooling: str) -> None:
    """Load the embedding model now (a no-op once loaded)."""
    _ahead(model, pooling, lambda embedder: embedder.load())


def _ahead(model: str, pooling: str, work: Callable[[Embedder], object]) -> None:
    """`work` on the process' embedder for (model, pooling); a failure is left for the scoring."""
    try:
        work(shared_embedder(model, pooling))  # type: ignore[arg-type]
    except (EmbeddingError, ValueError):
        pass
