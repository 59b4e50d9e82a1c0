"""The CLCR case-search set as the key benchmarks read it: every case indexed by BM25, no dense arm yet
(each benchmark adds the arms it compares)."""

from __future__ import annotations

import numpy as np

from pipeline.paths import SHARED_DATA
from retrieval.eval.search import EvalSet, RetrievalEvalConfig, build_eval_set

CLCR = SHARED_DATA / "zh"


def bm25_eval_set() -> EvalSet:
    """40 labelled queries over 1,884 cases, every passage of every case searchable by BM25."""
    return build_eval_set(
        CLCR / "judgments/clcr_cases.jsonl.gz",
        CLCR / "retrieval/clcr_queries.jsonl",
        CLCR / "retrieval/clcr_qrels_by_annotator.tsv",
        RetrievalEvalConfig(dense_models=()),
    )


def ndcg10(per_query: dict[str, list[float]]) -> float:
    """Mean nDCG@10 of `score_queries`' per-query rows, rounded as the benchmarks print it."""
    return round(float(np.mean([v[0] for v in per_query.values()])), 4)
