"""How far apart key heads trained the same way land on CLCR: one head per seed (the shipped recipe, or
with the case-search pair kinds switched on, or another pooling), each scored by nDCG@10 of its dense
arm alone and fused with BM25 (RRF, equal weights) against BM25 in the same run, with a paired bootstrap
95% interval over the queries of the fused arm's gain on BM25, then the mean and spread over the seeds.

The pairs, their split, the IDF weights and the training are those of `ldx train keys`
(retrieval/train_keys.py); `--seeds` seeds the head's training only (the split is fixed by the
tokenizer's rule). The shipped key head reads the embedded input (layer 0), which needs no context, so
the raw keys of the pairs and of all CLCR passages come from the embedding table (`RawKeys.embedded`) in
seconds. CLCR: 40 labelled queries, 1,884 cases, every passage keyed (`ldx eval retrieval
--dense-passages 0`); a head's figure differs from the eval's by its own seed only.

    PYTHONPATH=. .venv/bin/python benchmarks/key_seeds.py [--seeds 0 1 2] [--far-pairs] [--facts-pairs]
        [--charge-pairs N] [--pooling bm25|idf|mean] [--lr 5e-4] [--threads 2]

A choice between recipes (a learning rate, a pooling) reads the validation MRR only: CLCR is the test.
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
from txl.lm_metrics import bootstrap_interval
from txl.pooling import KEY_POOLING, KEY_POOLINGS


def spread(values: list[float]) -> dict[str, float]:
    v = np.array(values)
    return {"mean": round(float(v.mean()), 4), "sd": round(float(v.std(ddof=1)), 4) if len(v) > 1 else 0.0}


def gain_interval(rows: dict[str, list[float]], base: dict[str, list[float]], n: int = 2000) -> list[float]:
    """95% interval of mean nDCG@10(rows) − mean nDCG@10(base), queries resampled with replacement."""
    diff = np.array([rows[q][0] - base[q][0] for q in base])
    return [round(x, 4) for x in bootstrap_interval(diff, np.ones(len(diff)), resamples=n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--far-pairs", action="store_true")
    ap.add_argument("--facts-pairs", action="store_true")
    ap.add_argument("--charge-pairs", type=int, default=0)
    ap.add_argument("--pooling", choices=KEY_POOLINGS, default=KEY_POOLING)
    ap.add_argument("--lr", type=float, default=FitConfig.lr, help="The head's AdamW learning rate.")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--time-budget", type=float, default=240.0, help="seconds of training per head at most")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    cfg = KeyTrainConfig(
        far_pairs=args.far_pairs,
        facts_pairs=args.facts_pairs,
        charge_pairs=args.charge_pairs,
        pooling=args.pooling,
    )
    model, tok = load_encoder(SHIPPED_CHECKPOINT, "cpu", keys="raw")
    b = build_pairs(cfg)
    reads = RawKeys(cfg.layer, cfg.pooling, token_idf(tok, b, model.cfg.vocab_size))
    attach(model, reads)
    pairs_raw = encode_raw(model, tok, b, reads)
    train, val, candidates, _ = pair_tables(b, hard_negatives(b, list(range(len(b.rows)))))
    es = bm25_eval_set()
    eval_cfg = RetrievalEvalConfig()
    clcr_raw = raw_passage_keys(model, tok, es.index.passages, SHIPPED_CHECKPOINT, None, reads)
    query_raw = {text: encode_query(model, tok, text) for text in es.queries.values()}
    bm25_rows = score_queries(es, ["bm25"], {}, eval_cfg)
    bm25 = ndcg10(bm25_rows)
    print(
        json.dumps(
            {
                "bm25_ndcg10": bm25,
                "n_train_pairs": len(train.a),
                "n_val_pairs": len(val.a),
                "encode_seconds": round(time.perf_counter() - t0, 1),
                "config": vars(args),
            }
        ),
        flush=True,
    )
    rows = []
    for seed in args.seeds:
        fit = FitConfig(seed=seed, time_budget_s=args.time_budget, lr=args.lr)
        head, report = fit_key_head(pairs_raw, train, val, candidates, fit, reads=reads)
        queries = {t: head.apply_np(v) for t, v in query_raw.items()}
        es.index.add_dense(
            "txl", MatrixArm(head.apply_np(clcr_raw), queries.__getitem__, len(es.index.passages))
        )
        dense = ndcg10(score_queries(es, ["txl"], {}, eval_cfg))
        fused_rows = score_queries(es, ["bm25", "txl"], {}, eval_cfg)
        fused = ndcg10(fused_rows)
        rows.append(
            {
                "seed": seed,
                "key_head": head.identity,
                "val_mrr": report["head"]["mrr"],
                "dense": dense,
                "bm25+dense": fused,
                "fused_gain_ci95": gain_interval(fused_rows, bm25_rows),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    summary = {k: spread([r[k] for r in rows]) for k in ("val_mrr", "dense", "bm25+dense")}
    summary["dense_x_bm25"] = round(summary["dense"]["mean"] / bm25, 3)
    summary["fused_x_bm25"] = round(summary["bm25+dense"]["mean"] / bm25, 3)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
