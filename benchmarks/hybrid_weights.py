"""The RRF weight of one dense arm in the hybrid, on a corpus in the CLCR layout: BM25 fused with the arm
at each weight (0 = BM25 alone), and a 2-fold choice of the weight (chosen on half the queries by
nDCG@10, scored on the other half) so the pick is not read off the figures it is judged by.

    nice -n 10 .venv/bin/python benchmarks/hybrid_weights.py --arm txl \\
        --corpus ../shared/data/zh/judgments/clcr_cases.jsonl.gz \\
        --queries ../shared/data/zh/retrieval/clcr_queries.jsonl \\
        --qrels ../shared/data/zh/retrieval/clcr_qrels_by_annotator.tsv [--key-cache runs/clcr_keys]

Every passage of a case is keyed by default (`--dense-passages 0`), as `ldx run` indexes a document.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from retrieval.eval.search import METRICS, RetrievalEvalConfig, build_eval_set, mean_metrics, score_queries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--qrels", type=Path, required=True)
    ap.add_argument("--arm", default="txl", choices=["txl", "minilm"])
    ap.add_argument(
        "--weights", type=float, nargs="+", default=[0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]
    )
    ap.add_argument(
        "--dense-passages",
        type=int,
        default=0,
        help="passages per case the dense arm keys (0: all, as ldx run)",
    )
    ap.add_argument("--key-cache", help="folder of raw passage keys (ldx eval retrieval --key-cache)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = RetrievalEvalConfig(
        dense_models=(args.arm,), dense_passages=args.dense_passages, key_cache=args.key_cache
    )
    es = build_eval_set(args.corpus, args.queries, args.qrels, cfg)
    per_weight = {}
    for w in args.weights:
        # weight 0 leaves BM25 alone (a zero-weight arm is skipped)
        per_weight[w] = score_queries(es, ["bm25", args.arm], {args.arm: w}, cfg)
        print(json.dumps({"arm": args.arm, "weight": w, **mean_metrics(per_weight[w])}), flush=True)
    qids = sorted(es.queries, key=lambda q: (len(q), q))
    folds = [qids[0::2], qids[1::2]]
    for i, (pick_on, score_on) in enumerate((folds, folds[::-1])):
        best = max(args.weights, key=lambda w: np.mean([per_weight[w][q][0] for q in pick_on]))
        held = np.mean([per_weight[best][q] for q in score_on], axis=0)
        bm25 = np.mean([per_weight[0.0][q] for q in score_on], axis=0) if 0.0 in per_weight else None
        print(
            json.dumps(
                {
                    "fold": i,
                    "chosen_weight": best,
                    "held_out": dict(zip(METRICS, np.round(held, 4).tolist(), strict=True)),
                    "bm25_held_out": None
                    if bm25 is None
                    else dict(zip(METRICS, np.round(bm25, 4).tolist(), strict=True)),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
