"""CRScore throughput: the batched pipeline against a naive per-review loop, in one run.

Batched: every distinct sentence of all dev reviews and their pseudo-references is embedded
once, in batches of sentences of one length in tokens (`score_reviews`). Naive: each review is
scored on its own, its sentences and pseudo-references embedded afresh (a new embedder per
review, as a simple loop would). Same model, same pooling, same scores. The naive loop runs on
`naive_rows` rows taken at an even stride through the whole file, so that its sample has the
file's mix of languages and lengths (the rows are grouped by language: the first 150 are all
Python, with 12 % fewer tokens per review than the file's mean).

    .venv/bin/python -m bench.crscore_throughput [--naive-rows N]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from analyzers.crscore.score import score_reviews
from analyzers.crscore.sts import Embedder, load_sentence_transformer
from bot.cli.datasets import BUNDLED

DEV = Path(str(BUNDLED["crscore-dev"].file()))  # the bundled dataset, a plain file in a checkout


def load_items(path: Path = DEV) -> list[tuple[str, list[str]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["review"], [*r["pseudo_refs"]["magicoder"], *r["pseudo_refs"]["smells"]]) for r in rows]


def run(naive_rows: int = 150, data: Path = DEV) -> dict[str, Any]:
    """Reviews per second, batched and naive, and their ratio (the lead's `make bench` reads this)."""
    items = load_items(data)
    st = load_sentence_transformer("all-MiniLM-L6-v2")
    st.encode(["warm up"], show_progress_bar=False)

    t0 = time.perf_counter()
    embedder = Embedder(pooling="tokens", st_model=st)
    batched = score_reviews(embedder, items, None)
    batched_s = time.perf_counter() - t0

    sample = items[::max(1, len(items) // max(1, naive_rows))][:naive_rows]
    t0 = time.perf_counter()
    naive_embedders = [Embedder(pooling="tokens", st_model=st) for _ in sample]
    naive = [score_reviews(e, [item], None)[0] for e, item in zip(naive_embedders, sample, strict=True)]
    naive_s = time.perf_counter() - t0

    picked = batched[::max(1, len(items) // max(1, naive_rows))][:naive_rows]
    agree = max(abs(a.rel - b.rel) for a, b in zip(picked, naive, strict=True))
    batched_rate = len(items) / batched_s
    naive_rate = len(sample) / naive_s
    return {
        "name": "crscore_throughput",
        "reviews": len(items),
        "batched_reviews_per_s": round(batched_rate, 1),
        "naive_reviews": len(sample),
        "naive_reviews_per_s": round(naive_rate, 1),
        "ratio": round(batched_rate / naive_rate, 2),
        "floor": 5.0,
        "max_rel_difference": round(float(agree), 6),
        # tokens through the model per review, and the share of them that is padding
        "batched_tokens_per_review": round(embedder.padded_tokens / len(items), 1),
        "batched_padding": round(1 - embedder.tokens / max(1, embedder.padded_tokens), 3),
        "naive_tokens_per_review": round(sum(e.padded_tokens for e in naive_embedders) / len(sample), 1),
        "naive_padding": round(1 - sum(e.tokens for e in naive_embedders)
                               / max(1, sum(e.padded_tokens for e in naive_embedders)), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--naive-rows", type=int, default=150)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    res = run(args.naive_rows)
    if args.json:
        print(json.dumps(res))
        return
    print(f"CRScore on {res['reviews']} dev reviews (all-MiniLM-L6-v2, token pooling)")
    print(f"  batched: {res['batched_reviews_per_s']:.1f} reviews/s")
    print(f"  naive:   {res['naive_reviews_per_s']:.1f} reviews/s ({res['naive_reviews']} reviews at an even stride)")
    print(f"  tokens through the model per review: batched {res['batched_tokens_per_review']} "
          f"({res['batched_padding']:.0%} padding), naive {res['naive_tokens_per_review']} "
          f"({res['naive_padding']:.0%} padding)")
    print(f"  ratio:   {res['ratio']:.2f}x (floor {res['floor']:.0f}x); same scores: "
          f"max |ΔRel| = {res['max_rel_difference']}")


if __name__ == "__main__":
    main()
