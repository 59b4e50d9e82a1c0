"""Which states a key head should read: every layer of the shipped encoder, pooled evenly or by inverse
document frequency, each with a linear head trained on the same pairs; validation MRR of the pairs and
CLCR nDCG@10 (the dense arm alone, and fused with BM25 at equal weights) against BM25 in the same run.

The pairs, their split and the training are those of `ldx train keys` (retrieval/train_keys.py); the
IDF weights are counted over the training passages as it counts them. The pairs and every CLCR
passage are encoded once, each segment's states pooled at every layer (`EveryLayer`, attached in the
key head's place); each variant is a slice of those. CLCR: 40 labelled queries, 1,884 cases, every
passage of every case keyed as `ldx run` indexes a document (`ldx eval retrieval --dense-passages 0`).
Each variant's nDCG@10 is compared with the last layer's mean (the pooling of the head shipped before)
query by query, with a bootstrap 95% interval over the queries.

    PYTHONPATH=. .venv/bin/python benchmarks/key_pooling.py [--max-train-docs N] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from clcr import bm25_eval_set, ndcg10

from pipeline.paths import SHIPPED_CHECKPOINT
from retrieval.encoder import encode_query, load_encoder
from retrieval.eval.search import RetrievalEvalConfig, raw_passage_keys, score_queries
from retrieval.hybrid import MatrixArm
from retrieval.key_pairs import build_pairs
from retrieval.train_keys import KeyTrainConfig, encode_raw, hard_negatives, pair_tables, token_idf
from txl.keys import FitConfig, RawKeys, attach, fit_key_head
from txl.pooling import KEY_POOLINGS


class EveryLayer:
    """Stands in for a key head: a segment's raw keys of every layer and pooling at once, [(L + 1) * 2 * d]
    (layer 0's mean, its idf pooling, layer 1's, …, the last layer's output last)."""

    pooling, identity, layer = "every", "every-layer", -1

    def __init__(self, n_layer: int, idf: np.ndarray):
        self.readers = [RawKeys(layer, p, idf) for layer in range(n_layer + 1) for p in KEY_POOLINGS]

    def pool(self, model, out, lane, span, ids) -> np.ndarray:
        return np.concatenate([r.pool(model, out, lane, span, ids) for r in self.readers])

    def fingerprint(self) -> bytes:
        return b"every-layer"

    def context_free(self, model) -> bool:
        return False  # the layers above 0 read context: the passages are encoded

    def apply_np(self, raw: np.ndarray) -> np.ndarray:
        return np.asarray(raw, dtype=np.float16)


def variant(x: np.ndarray, i: int, d: int) -> np.ndarray:
    return np.ascontiguousarray(x[:, i * d : (i + 1) * d], dtype=np.float32)


def bootstrap(diff: np.ndarray, n: int = 2000, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), (n, len(diff)))].mean(1)
    return [round(float(v), 4) for v in np.percentile(means, [2.5, 97.5])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--max-train-docs", type=int, default=None, help="training records per source (default all)"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--time-budget", type=float, default=240.0, help="seconds of training per head at most")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    model, tok = load_encoder(SHIPPED_CHECKPOINT, "cpu", keys="raw")
    d, n_layer = model.cfg.d_model, model.cfg.n_layer
    b = build_pairs(KeyTrainConfig(max_train_docs=args.max_train_docs))
    idf = token_idf(tok, b, model.cfg.vocab_size)
    every = EveryLayer(n_layer, idf)
    attach(model, every)
    with torch.no_grad():
        pairs_raw = encode_raw(model, tok, b)
    train, val, candidates, _ = pair_tables(b, hard_negatives(b, list(range(len(b.rows)))))
    es = bm25_eval_set()
    cfg = RetrievalEvalConfig()
    with torch.no_grad():
        clcr_raw = raw_passage_keys(model, tok, es.index.passages, SHIPPED_CHECKPOINT, None, every)
        query_raw = {q: encode_query(model, tok, text) for q, text in es.queries.items()}
    encode_s = time.perf_counter() - t0
    bm25 = score_queries(es, ["bm25"], {}, cfg)
    rows, per_query = [], []
    for i, reader in enumerate(every.readers):
        head, report = fit_key_head(
            variant(pairs_raw, i, d),
            train,
            val,
            candidates,
            FitConfig(time_budget_s=args.time_budget),
            reads=reader,
        )
        keys = head.apply_np(variant(clcr_raw, i, d))
        queries = {es.queries[q]: head.apply_np(variant(v[None], i, d))[0] for q, v in query_raw.items()}
        es.index.add_dense("txl", MatrixArm(keys, queries.__getitem__, len(es.index.passages)))
        dense, fused = score_queries(es, ["txl"], {}, cfg), score_queries(es, ["bm25", "txl"], {}, cfg)
        per_query.append(np.array([dense[q][0] for q in sorted(dense)]))
        rows.append(
            {
                "layer": reader.layer if reader.layer < n_layer else -1,
                "pooling": reader.pooling,
                "val_mrr_raw": report["raw"]["mrr"],
                "val_mrr_head": report["head"]["mrr"],
                "clcr_ndcg10_dense": ndcg10(dense),
                "clcr_ndcg10_bm25+dense": ndcg10(fused),
            }
        )
    base = next(
        p for r, p in zip(every.readers, per_query, strict=True) if (r.layer, r.pooling) == (n_layer, "mean")
    )
    for row, scores in zip(rows, per_query, strict=True):
        diff = scores - base
        row["dense_vs_last_mean"] = round(float(diff.mean()), 4)
        row["interval"] = bootstrap(diff)
        print(json.dumps(row), flush=True)
    summary = {
        "bm25_ndcg10": ndcg10(bm25),
        "n_queries": len(es.queries),
        "n_passages": len(es.index.passages),
        "n_train_pairs": len(train.a),
        "n_val_pairs": len(val.a),
        "encode_seconds": round(encode_s, 1),
    }
    print(json.dumps(summary), flush=True)
    print(
        "| layer | pooling | val MRR (raw → head) | CLCR nDCG@10, dense | Δ vs last-layer mean [95%] | BM25 + dense |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['layer']} | {r['pooling']} | {r['val_mrr_raw']} → {r['val_mrr_head']} | "
            f"{r['clcr_ndcg10_dense']} | {r['dense_vs_last_mean']:+.4f} {r['interval']} | "
            f"{r['clcr_ndcg10_bm25+dense']} |"
        )


if __name__ == "__main__":
    main()
