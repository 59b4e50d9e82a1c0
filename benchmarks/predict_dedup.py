"""Near-duplicates on the shared corpora, and what reusing identical document prefixes saves.

Prints: near-duplicate document pairs and shared passages found (MinHash over segment shingles); the
share of segment encodings (and tokens) that identical prefixes make unnecessary; and, with the shipped
Transformer-XL checkpoint (or --checkpoint), encoding wall time with prefix reuse as a ratio to encoding
every document from scratch, in the same process.

    .venv/bin/python benchmarks/predict_dedup.py [--limit N] [--encode-docs N]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import time
from pathlib import Path

import torch

import pipeline
from pipeline.config import ParseConfig
from retrieval.dedup import PrefixStateCache, find_duplicates, prefix_keys, shared_prefix_saving
from retrieval.predict import BOILERPLATE

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPORA = [
    ("zh/judgments/judge_criminal.jsonl.gz", "fd"),
    ("zh/judgments/clcr_cases.jsonl.gz", "text"),
    ("zh/judgments/wenshu_mixed.jsonl", "text"),
    ("zh/partial/lecardv2/*.jsonl", "fact"),
]


def load(limit: int | None) -> dict[str, list]:
    segments: dict[str, list] = {}
    for pattern, field in CORPORA:
        for path in sorted(DATA.glob(pattern)):
            docs = pipeline.load_documents(path, ParseConfig(jsonl_text_field=field))
            for doc in itertools.islice(docs, limit):
                # the same judgment in two corpora gets one doc_id (same bytes): keep both as documents
                key = doc.doc_id if doc.doc_id not in segments else f"{doc.doc_id}@{path.name}"
                segments[key] = [dataclasses.replace(s, doc_id=key) for s in pipeline.segment(doc)]
    return segments


def encode_all(model, tokenizer, docs: dict[str, list], cache: PrefixStateCache | None) -> float:
    from pipeline.tokenizer import encode_segments

    device = next(model.parameters()).device
    # process CPU time: on a shared machine wall time mostly measures the neighbours
    t0 = time.process_time()
    with torch.no_grad():
        for segs in docs.values():
            carry: dict = {}
            for seg_key, (ids, mask) in zip(prefix_keys(segs), encode_segments(segs, tokenizer), strict=True):
                state = cache.get(seg_key) if cache is not None else None
                if state is None:
                    out = model(torch.tensor([ids], device=device),
                                connective_mask=torch.tensor([mask], device=device), **carry)
                    state = (out.hidden.mean(1), out.carry())
                    if cache is not None:
                        cache.put(seg_key, state)
                carry = state[1]
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=None, help="documents per corpus file")
    ap.add_argument("--encode-docs", type=int, default=400, help="documents encoded for the timing")
    ap.add_argument("--checkpoint", type=Path, default=None)
    args = ap.parse_args()
    torch.set_num_threads(2)

    t0 = time.perf_counter()
    docs = load(args.limit)
    n_segments = sum(map(len, docs.values()))
    print(f"{len(docs)} documents, {n_segments} segments loaded in {time.perf_counter() - t0:.1f}s")
    t0 = time.perf_counter()
    found = find_duplicates(docs, skip_passage_types=BOILERPLATE)
    print(f"near-duplicate document pairs: {len(found.documents)}; shared passages (segment pairs across "
          f"documents, notices/signatures/appendices/headers left out): {len(found.passages)}; MinHash + LSH took {time.perf_counter() - t0:.1f}s")
    for p in found.documents[:5]:
        print(f"  {p.a} ~ {p.b}  Jaccard≈{p.similarity:.2f}")
    saving = shared_prefix_saving(docs)
    print(f"identical prefixes: {saving['segments_reused']}/{saving['segments']} segment encodings reusable "
          f"({saving['segment_saving']:.2%} of segments, {saving['token_saving']:.2%} of tokens)")

    from retrieval.encoder import checkpoint_file, load_encoder

    ckpt = checkpoint_file(str(args.checkpoint) if args.checkpoint else None)
    if ckpt is None:
        print("no checkpoint: encoding timing skipped")
        return
    model, tokenizer = load_encoder(ckpt, "cpu")
    # the duplicated documents and an equal number of others, so the timing sees the saving it would see
    dup_ids = {d for p in found.documents for d in (p.a, p.b)}
    chosen = [k for k in docs if k in dup_ids][: args.encode_docs // 2]
    chosen += [k for k in docs if k not in dup_ids][: args.encode_docs - len(chosen)]
    subset = {k: docs[k] for k in chosen}
    plain = encode_all(model, tokenizer, subset, None)
    cache = PrefixStateCache()
    reused = encode_all(model, tokenizer, subset, cache)
    print(f"encoding {len(subset)} documents ({sum(map(len, subset.values()))} segments): "
          f"{plain:.1f}s CPU from scratch, {reused:.1f}s CPU with prefix reuse; ratio {reused / plain:.3f} "
          f"({cache.hits} of {cache.hits + cache.misses} segment encodings reused)")


if __name__ == "__main__":
    main()
