"""The index stage as it runs (the layers below the highest input it keeps, nothing injected) against
the baseline of the whole model with injection on, which is what the stage ran before.

Both index the same N complete criminal judgments (judge_criminal `fd`, parsed and segmented as `ldx
run` does) with the shipped Transformer-XL into a fresh segment-state store, in this process, one after
the other. Prints wall and process CPU seconds of each, their ratio, and the largest difference between
the two stores' keys and fp16 states (they must hold the same).

    .venv/bin/python benchmarks/index_layers.py [--docs 150] [--threads 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from encode_lanes import load

from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.inject import DocInput, encode_stream
from retrieval.stage import INDEX_DIR, index_layers, index_segments, open_or_create
from retrieval.store import SegmentStore

CONFIG = RetrievalConfig(sentence_model=False)  # the encoder's work alone


def as_stage(out: Path, docs, model, tokenizer) -> SegmentStore:
    index_segments(out, docs, model, tokenizer, CONFIG)
    return SegmentStore.open(out / INDEX_DIR)


def whole_model(out: Path, docs, model, tokenizer) -> SegmentStore:
    """Every layer, injection on: the encoding the index stage ran before it was cut."""
    store = open_or_create(out / INDEX_DIR, model, CONFIG)
    inputs = [DocInput.encoded(segs, tokenizer) for segs in docs]
    for _ in encode_stream(model, inputs, store, CONFIG, keep_hidden=False):
        pass
    store.commit()
    return store


def timed(fn, *args) -> tuple[float, float, SegmentStore]:
    wall, cpu = time.perf_counter(), time.process_time()
    store = fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, store


def contents(store: SegmentStore) -> tuple[list[str], np.ndarray, np.ndarray]:
    ids = sorted(r["segment_id"] for r in store.entries())
    return ids, store.keys(ids), store.states(ids)[0].astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=150)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    docs = load(args.docs)
    model, tokenizer = load_encoder(checkpoint_file(None), "cpu")
    n_segs = sum(map(len, docs))
    print(f"{len(docs)} judgments, {n_segs} segments; torch threads {args.threads}")
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in (("baseline: every layer, injection on", whole_model), ("index stage", as_stage)):
            runs[name] = timed(fn, Path(tmp) / name.split(":")[0].replace(" ", "_"), docs, model, tokenizer)
            wall, cpu, _ = runs[name]
            print(f"{name:<38} {wall:7.1f} s wall ({len(docs) / wall * 60:6.0f} docs/min), {cpu:7.1f} s CPU")
        (w0, c0, base), (w1, c1, cut) = runs.values()
        print(f"layers run by the index stage: {index_layers(model, cut)} of {model.cfg.n_layer}")
        print(f"ratio baseline / index stage: {w0 / w1:.2f}x wall, {c0 / c1:.2f}x CPU")
        (ids0, k0, s0), (ids1, k1, s1) = contents(base), contents(cut)
        assert ids0 == ids1, "the two stores hold other segments"
        print(
            f"largest difference: keys {np.abs(k0 - k1).max():.2e}, fp16 states {np.abs(s0 - s1).max():.2e}"
        )


if __name__ == "__main__":
    main()
