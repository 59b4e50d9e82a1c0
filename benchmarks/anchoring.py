"""Semantic anchoring on vs off: the LM's per-token NLL over real long judgments and contracts, and how often memory
is reset. Anchoring pays off only if the resets remove memory that was hurting prediction.

Run: `.venv/bin/python benchmarks/anchoring.py [--checkpoint CKPT] [--docs 8] [--threshold 0.2]`
(needs a trained checkpoint; the shipped one by default).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time

import torch

import pipeline
from pipeline.config import ParseConfig
from pipeline.tokenizer import encode_segment
from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.inject import encode_document

CORPORA = [
    ("../shared/data/zh/judgments/judge_criminal.jsonl.gz", "fd"),
    ("../shared/data/en/contracts/cuad_contracts.jsonl.gz", "text"),
]


@torch.no_grad()
def mean_nll(model, segments, ids, cfg: RetrievalConfig) -> tuple[float, int]:
    out = encode_document(model, segments, ids, None, cfg)
    total, n = 0.0, 0
    for e, x in zip(out, ids, strict=True):
        if len(x) < 2:
            continue
        logp = model.log_probs(e.hidden[None, :-1])[0]
        target = torch.tensor(x[1:], device=logp.device)
        total += float(-logp.gather(1, target[:, None]).sum())
        n += len(x) - 1
    return total, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--docs", type=int, default=8, help="documents per corpus")
    ap.add_argument("--threshold", type=float, default=RetrievalConfig().anchoring_threshold)
    args = ap.parse_args()
    torch.set_num_threads(2)
    path = checkpoint_file(args.checkpoint)
    if path is None or not path.is_file():
        raise SystemExit("needs a trained checkpoint (--checkpoint or data/models/*.pt)")
    model, tok = load_encoder(path, "cpu")
    off, on = RetrievalConfig(), RetrievalConfig(anchoring=True, anchoring_threshold=args.threshold)
    from retrieval.anchoring import drift_resets

    for corpus, field in CORPORA:
        t0 = time.perf_counter()
        sums = {"off": [0.0, 0], "on": [0.0, 0]}
        resets = segs = 0
        docs = pipeline.load_documents(corpus, ParseConfig(jsonl_text_field=field))
        for doc in itertools.islice(docs, args.docs):
            segments = pipeline.segment(doc)
            ids = [encode_segment(s, tok)[0] for s in segments]
            for name, cfg in (("off", off), ("on", on)):
                t, n = mean_nll(model, segments, ids, cfg)
                sums[name][0] += t
                sums[name][1] += n
            resets += sum(drift_resets([s.text for s in segments], args.threshold))
            segs += len(segments)
        ppl = {k: math.exp(t / max(n, 1)) for k, (t, n) in sums.items()}
        print(
            json.dumps(
                {
                    "corpus": corpus,
                    "docs": args.docs,
                    "segments": segs,
                    "reset_rate": round(resets / max(segs, 1), 3),
                    "ppl_off": round(ppl["off"], 2),
                    "ppl_on": round(ppl["on"], 2),
                    "ratio_on_over_off": round(ppl["on"] / ppl["off"], 4),
                    "seconds": round(time.perf_counter() - t0, 1),
                }
            )
        )


if __name__ == "__main__":
    main()
