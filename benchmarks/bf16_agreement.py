"""What bf16 autocast changes in the index: every segment of N Chinese criminal judgments indexed twice by
the shipped model, in fp32 and under bf16 autocast (`model.dtype`), and the two stores' keys compared.

    .venv/bin/python benchmarks/bf16_agreement.py [--docs 200]

Prints the cosine of each segment's two keys (mean, minimum) and how many of each key's ten nearest
neighbours in other documents are the same under both precisions (fp32 against itself is 1 by
construction: the baseline). Role predictions are compared with `ldx eval roles` under each dtype.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path

import numpy as np
import torch
from run_common import write_jsonl, zh_judgments

from flows.config import LdxConfig
from pipeline import segment
from pipeline.parsing import iter_documents
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.stage import index_segments
from retrieval.store import SegmentStore
from txl.model import autocast

DTYPES = ("float32", "bfloat16")


def neighbours(keys: np.ndarray, owner: np.ndarray, k: int = 10) -> np.ndarray:
    """[N, k] indices of each key's k most similar keys of other documents."""
    sims = keys @ keys.T
    sims[owner[:, None] == owner[None, :]] = -np.inf
    return np.argsort(-sims, 1)[:, :k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = LdxConfig()
    cfg.retrieval.sentence_model = False  # MiniLM vectors are fp32 either way
    model, tokenizer = load_encoder(checkpoint_file(None), "cpu")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.jsonl"
        write_jsonl(path, list(itertools.islice(zh_judgments(), args.docs)))
        docs = [segment(d, cfg.segment) for d in iter_documents(path, cfg.parse, errors=[])]
        ids = [s.segment_id for d in docs for s in d]
        owner = np.array([s.doc_id for d in docs for s in d])
        keys = {}
        for dtype in DTYPES:
            with autocast("cpu", dtype):
                index_segments(Path(tmp) / dtype, docs, model, tokenizer, cfg.retrieval)
            keys[dtype] = SegmentStore.open(Path(tmp) / dtype / "index", config=cfg.retrieval).keys(ids)
    a, b = keys["float32"], keys["bfloat16"]
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    na, nb = neighbours(a, owner), neighbours(b, owner)
    overlap = np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(na, nb, strict=True)])
    print(f"{len(ids)} segments of {len(docs)} judgments")
    print(f"key cosine fp32 vs bf16: mean {cos.mean():.5f}, min {cos.min():.5f}")
    print(f"top-10 cross-document neighbours shared: {overlap:.3f} (fp32 against itself: 1.000)")


if __name__ == "__main__":
    main()
