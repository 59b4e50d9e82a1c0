"""Near-duplicates on the shared corpora, and what reusing identical document prefixes saves.

Prints: near-duplicate document pairs and shared passages found (MinHash over segment shingles); the
share of segment encodings (and tokens) that identical prefixes make unnecessary (retrieval.prefix);
and, with the shipped Transformer-XL checkpoint (or --checkpoint), the encoder's CPU time with prefix
reuse as a ratio to encoding every document from scratch (retrieval.inject.encode_stream, both ways in
this process).

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
from pipeline.parsing import iter_documents
from pipeline.paths import SHARED_DATA
from retrieval.predict.dedup import find_duplicates
from retrieval.predict.stage import BOILERPLATE
from retrieval.prefix import chain_hashes, shared_prefix_saving

CORPORA = [
    ("zh/judgments/judge_criminal.jsonl.gz", "fd"),
    ("zh/judgments/clcr_cases.jsonl.gz", "text"),
    ("zh/judgments/wenshu_mixed.jsonl", "text"),
    ("zh/partial/lecardv2/*.jsonl", "fact"),
]


def load(limit: int | None, skipped: list) -> dict[str, list]:
    segments: dict[str, list] = {}
    for pattern, field in CORPORA:
        for path in sorted(SHARED_DATA.glob(pattern)):
            # a corpus line without text is skipped (and counted), as `ldx run` would report it
            docs = iter_documents(path, ParseConfig(jsonl_text_field=field), errors=skipped)
            for doc in itertools.islice(docs, limit):
                # the same judgment in two corpora gets one doc_id (same bytes): keep both as documents
                key = doc.doc_id if doc.doc_id not in segments else f"{doc.doc_id}@{path.name}"
                segments[key] = [dataclasses.replace(s, doc_id=key) for s in pipeline.segment(doc)]
    return segments


def doc_inputs(docs: dict[str, list], tokenizer) -> list:
    from retrieval.inject import DocInput

    return [DocInput.encoded(segs, tokenizer) for segs in docs.values()]


def encode_all(model, docs: list, reuse: bool) -> tuple[float, dict]:
    from retrieval.config import RetrievalConfig
    from retrieval.inject import encode_stream

    stats: dict = {}
    # process CPU time: on a shared machine wall time mostly measures the neighbours
    t0 = time.process_time()
    for _ in encode_stream(model, docs, None, RetrievalConfig(reuse_prefixes=reuse), stats):
        pass
    return time.process_time() - t0, stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=None, help="documents per corpus file")
    ap.add_argument("--encode-docs", type=int, default=400, help="documents encoded for the timing")
    ap.add_argument("--checkpoint", type=Path, default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)

    t0 = time.perf_counter()
    skipped: list = []
    docs = load(args.limit, skipped)
    n_segments = sum(map(len, docs.values()))
    print(
        f"{len(docs)} documents ({len(skipped)} corpus lines skipped as bad), {n_segments} segments loaded in {time.perf_counter() - t0:.1f}s"
    )
    t0 = time.perf_counter()
    found = find_duplicates(docs, skip_passage_types=BOILERPLATE)
    print(
        f"near-duplicate document pairs: {len(found.documents)}; shared passages (segment pairs across "
        f"documents, notices/signatures/appendices/headers left out): {len(found.passages)}; MinHash + LSH took {time.perf_counter() - t0:.1f}s"
    )
    for p in found.documents[:5]:
        print(f"  {p.a} ~ {p.b}  Jaccard≈{p.similarity:.2f}")
    from pipeline.tokenizer import load_tokenizer

    tok = load_tokenizer()
    inputs = doc_inputs(docs, tok)
    chains = [
        chain_hashes([str(s.type) for s in d.segments], d.token_ids, d.connective_masks) for d in inputs
    ]
    saving = shared_prefix_saving(chains, [[len(ids) for ids in d.token_ids] for d in inputs])
    print(
        f"identical prefixes: {saving['segments_reused']}/{saving['segments']} segment encodings reusable "
        f"({saving['segment_saving']:.2%} of segments, {saving['token_saving']:.2%} of tokens)"
    )

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
    subset = doc_inputs({k: docs[k] for k in chosen}, tokenizer)
    plain, _ = encode_all(model, subset, reuse=False)
    reused, stats = encode_all(model, subset, reuse=True)
    print(
        f"encoding {len(subset)} documents ({sum(len(d.segments) for d in subset)} segments): "
        f"{plain:.1f}s CPU from scratch, {reused:.1f}s CPU with prefix reuse; ratio {reused / plain:.3f} "
        f"({stats['reused_segments']} segments, {stats['reused_tokens']} tokens reused)"
    )


if __name__ == "__main__":
    main()
