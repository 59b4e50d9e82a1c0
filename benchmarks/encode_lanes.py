"""Encoding many documents side by side (retrieval.lanes) against one document at a time.

Encodes N complete criminal judgments (judge_criminal `fd`, parsed and segmented as `ldx run` does)
with the shipped Transformer-XL into a fresh segment-state store, as the index stage does (the layers
below those it keeps, retrieval/stage.py), once with `encode_lanes=1` (the baseline: every segment its own forward call) and once with the
configured lanes, in this process. Prints documents and segments per minute of each and the ratio, in
wall time and in process CPU time (the steadier figure on a shared machine).

    .venv/bin/python benchmarks/encode_lanes.py [--docs 200] [--threads 1] [--lanes 32]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path

import torch

from pipeline.paths import SHARED_DATA


def load(n: int):
    from flows.config import LdxConfig
    from pipeline import segment
    from pipeline.parsing import iter_documents

    cfg = LdxConfig()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.jsonl"
        with gzip.open(SHARED_DATA / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
            rows = [json.loads(line) for line in itertools.islice(f, n)]
        path.write_text(
            "".join(
                json.dumps({"id": r["text_id"], "text": r["fd"]}, ensure_ascii=False) + "\n" for r in rows
            )
        )
        return [segment(doc, cfg.segment) for doc in iter_documents(path, cfg.parse, errors=[])]


def run(segments_by_doc, model, tokenizer, lanes: int) -> tuple[float, float, dict]:
    from retrieval.config import RetrievalConfig
    from retrieval.stage import index_segments

    cfg = RetrievalConfig(encode_lanes=lanes)
    with tempfile.TemporaryDirectory() as out:
        wall, cpu = time.perf_counter(), time.process_time()
        counts = index_segments(out, segments_by_doc, model, tokenizer, cfg)
        return time.perf_counter() - wall, time.process_time() - cpu, counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lanes", type=int, default=32)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    from retrieval.encoder import checkpoint_file, load_encoder

    docs = load(args.docs)
    n_segs = sum(map(len, docs))
    model, tokenizer = load_encoder(checkpoint_file(None), "cpu")
    print(f"{len(docs)} judgments, {n_segs} segments; torch threads {args.threads}")
    results = {}
    for lanes in (1, args.lanes):
        wall, cpu, counts = run(docs, model, tokenizer, lanes)
        results[lanes] = (wall, cpu)
        print(
            f"lanes {lanes:>3}: {wall:7.1f} s wall ({len(docs) / wall * 60:6.0f} docs/min, {n_segs / wall:6.1f} segments/s)"
            f", {cpu:7.1f} s CPU; {counts['indexed_segments']} segments indexed"
        )
    (w1, c1), (wn, cn) = results[1], results[args.lanes]
    print(f"ratio lanes {args.lanes} / one at a time: {w1 / wn:.2f}x wall, {c1 / cn:.2f}x CPU")


if __name__ == "__main__":
    main()
