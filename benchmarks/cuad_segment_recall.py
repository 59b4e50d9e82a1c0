"""CUAD, contracts held apart: recall@k of the segments that contain a gold answer span, per question,
for BM25, the sentence model and their hybrid (RRF with the language-aware weights of
retrieval.hybrid.arm_weights: English queries keep the sentence model), searching within the question's
own contract.

The query is the clause category (the CUAD questions are one template around it, e.g. "Governing
Law"); a passage contains the answer when a gold answer's text lies inside it (spans cut by a passage
boundary count as missed). Held apart: contracts whose blake2b hash of doc_id is 0 mod 5, the same
rule `eval_qa` applies to contexts. `--txl` adds the encoder's keys as an arm (each contract's passages read
in order with memory, through the key head when one fits the encoder: txl/keys.py; `--keys raw` without
it) and its hybrid with BM25.
Run: `.venv/bin/python benchmarks/cuad_segment_recall.py [--contracts 20] [--txl]`.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import time
from collections import defaultdict

import numpy as np

from pipeline.records import BlockType, Segment
from pipeline.tokenizer import encode_segment
from retrieval.encoder import checkpoint_file, encode_query, load_encoder
from retrieval.eval.search import split_passages
from retrieval.hybrid import HybridIndex, MatrixArm
from retrieval.inject import encode_document
from retrieval.sentence import embed
from txl.keys import key_identity

DATA = "../shared/data/en/contracts/"
KS = (1, 3, 5, 10)


def held_apart(doc_id: str) -> bool:
    return hashlib.blake2b(doc_id.encode(), digest_size=8).digest()[0] % 5 == 0


def txl_arm(model, tok, passages) -> MatrixArm:
    segs = [Segment(p.doc_id, i, 0, BlockType.OTHER, p.text, 0, 0, 0) for i, p in enumerate(passages)]
    keys = np.stack([e.key for e in encode_document(model, segs, [encode_segment(s, tok)[0] for s in segs])])
    return MatrixArm(keys.astype(np.float32), lambda q: encode_query(model, tok, q), len(passages))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contracts", type=int, default=20)
    ap.add_argument("--passage-chars", type=int, default=600)
    ap.add_argument("--no-dense", action="store_true")
    ap.add_argument("--txl", action="store_true", help="also the encoder's keys (the shipped model)")
    ap.add_argument(
        "--keys", default="auto", help="key head of the txl arm: auto, raw or a file (retrieval.key_head)"
    )
    args = ap.parse_args()
    model, tok = load_encoder(checkpoint_file(None), keys=args.keys) if args.txl else (None, None)
    contracts = {}
    with gzip.open(DATA + "cuad_contracts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if held_apart(row["doc_id"]):
                contracts[row["doc_id"]] = row["text"]
            if len(contracts) >= args.contracts:
                break
    questions = defaultdict(list)
    with gzip.open(DATA + "cuad_qa.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q["doc_id"] in contracts and not q["is_impossible"] and q["answers"]:
                questions[q["doc_id"]].append(q)
    t0 = time.perf_counter()
    hits = {arm: {k: [] for k in KS} for arm in ("bm25", "minilm", "hybrid", "txl", "bm25+txl")}
    n_passages = 0
    for doc_id, text in contracts.items():
        passages = split_passages(doc_id, "", text, args.passage_chars)
        n_passages += len(passages)
        index = HybridIndex(passages)
        arms = {"bm25": ["bm25"]}
        if not args.no_dense:
            index.add_dense(
                "minilm", MatrixArm(embed([p.text for p in passages]), lambda q: embed([q])[0], len(passages))
            )
            arms.update({"minilm": ["minilm"], "hybrid": ["bm25", "minilm"]})
        if model is not None:
            index.add_dense("txl", txl_arm(model, tok, passages))
            arms.update({"txl": ["txl"], "bm25+txl": ["bm25", "txl"]})
        for q in questions[doc_id]:
            golds = [" ".join(a["text"].split()) for a in q["answers"]]
            containing = {p.segment_id for p in passages if any(g in " ".join(p.text.split()) for g in golds)}
            if not containing:
                continue
            for arm, use in arms.items():
                ranked = [h.segment_id for h in index.search(q["category"], k=max(KS), arms=use)]
                for k in KS:
                    hits[arm][k].append(float(bool(containing & set(ranked[:k]))))
    result = {
        "contracts": len(contracts),
        "passages": n_passages,
        "questions": len(hits["bm25"][1]),
        "seconds": round(time.perf_counter() - t0, 1),
        "key_head": (key_identity(model) or "raw keys") if model is not None else None,
    }
    for arm, by_k in hits.items():
        if by_k[1]:
            result[arm] = {f"recall@{k}": round(float(np.mean(v)), 4) for k, v in by_k.items()}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
