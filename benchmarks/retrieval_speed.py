"""Single-query top-10 latency of the segment-state store at 10k and 100k keys: exact (flat) vs the
approximate indexes (HNSW, IVF-PQ with and without exact re-ranking), with the approximate indexes'
recall@10 against flat and the size of their index files.

Keys are d = 256 (the default model's width), drawn as a mixture of 1,000 Gaussian clusters and
normalised: segment states cluster by topic and document, and uniform random vectors would understate
what an approximate index achieves on real keys. Queries are stored keys plus noise (a segment similar
to a stored one). IVF-PQ is built once with its refine copy and searched at each `--refine-k-factors`
value (0 = PQ distances alone). Run:
`.venv/bin/python benchmarks/retrieval_speed.py [--sizes 10000 100000] [--refine-k-factors 0 4 8 16]`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from retrieval.config import RetrievalConfig
from retrieval.store import SegmentEntry, SegmentStore


def clustered_keys(n: int, d: int, rng: np.random.Generator, n_clusters: int = 1000) -> np.ndarray:
    centres = rng.normal(size=(n_clusters, d)).astype(np.float32)
    x = centres[rng.integers(0, n_clusters, n)] + 0.6 * rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def build(kind: str, keys: np.ndarray, root: str) -> tuple[SegmentStore, float]:
    t0 = time.perf_counter()
    store = SegmentStore.create(root, keys.shape[1], config=RetrievalConfig(index_type=kind))
    entries = [SegmentEntry(f"d{i // 50}:{i % 50}", f"d{i // 50}", i % 50, "OTHER") for i in range(len(keys))]
    store.add(entries, keys)
    store.commit()
    return store, time.perf_counter() - t0


def index_mb(root: str) -> float:
    return sum(f.stat().st_size for f in Path(root).glob("*.faiss")) / 2**20


def latencies(store: SegmentStore, queries: np.ndarray) -> tuple[np.ndarray, list[list[str]]]:
    times, results = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = store.search(q, 10)[0]
        times.append(time.perf_counter() - t0)
        results.append([s for s, _ in hits])
    return np.array(times) * 1000, results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--kinds", nargs="+", default=["hnsw", "ivfpq"], help="approximate indexes to compare with flat"
    )
    ap.add_argument(
        "--refine-k-factors", type=int, nargs="+", default=[0, 4, 8, 16], help="IVF-PQ re-ranking factors"
    )
    args = ap.parse_args()
    import faiss

    faiss.omp_set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(
        f"{'keys':>7} {'index':>12} {'build s':>8} {'MB':>7} {'p50 ms':>8} {'p95 ms':>8} {'p50 vs flat':>12} "
        f"{'recall@10':>10}"
    )
    for n in args.sizes:
        keys = clustered_keys(n, args.dim, rng)
        q = keys[rng.integers(0, n, args.queries)] + 0.05 * rng.normal(size=(args.queries, args.dim)).astype(
            np.float32
        )
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        base = None
        for kind in ("flat", *args.kinds):
            with tempfile.TemporaryDirectory() as root:
                store, build_s = build(kind, keys, root)
                mb = index_mb(root)
                built = store.manifest["built"]
                factors = args.refine_k_factors if built == "ivfpq" else [0]
                for f in factors:
                    # search as `ldx ask` does: memory-mapped
                    cfg = RetrievalConfig(index_type=kind, ivf_refine_k_factor=f)
                    ms, res = latencies(SegmentStore.open(root, mmap=True, config=cfg), q)
                    if base is None:
                        base = (ms, res)
                    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(res, base[1], strict=True)])
                    p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
                    ratio = p50 / np.percentile(base[0], 50)
                    name = built + (f"+refine{f}" if f else "")
                    print(
                        f"{n:>7} {name:>12} {build_s:>8.1f} {mb:>7.1f} {p50:>8.3f} {p95:>8.3f} {ratio:>11.2f}x "
                        f"{recall:>10.3f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
