"""Single-query top-10 latency (p50, p95) of the segment-state store and recall@10 against exact search,
at 10k and 100k keys by default and at 1M with `--sizes 1000000`: the index "auto" chooses by size
(retrieval/faiss_index.py: flat below `exact_below_keys`, HNSW from there), and flat, HNSW and IVF-PQ
(with and without exact re-ranking) by name.

Keys are d = 256 (the key head's width, data/models/keys.pt), drawn as a mixture of 1,000 Gaussian
clusters and normalised: segment states cluster by topic and document, and uniform random vectors would
understate what an approximate index achieves on real keys. Queries are stored keys plus noise (a segment
similar to a stored one). Exact neighbours come from one batched exact search, so recall does not need
the flat index's single-query timing (seconds per query at 1M); name "flat" in `--kinds` to time it.
IVF-PQ is built once with its refine copy and searched at each `--refine-k-factors` value (0 = PQ
distances alone), HNSW once and searched at each `--ef-search` value. Indexes are built with `--build-threads` and searched with `--threads` (one thread, as
`ldx ask` shares the machine). Each row says whether it meets the goal at that size (issue 17: p95 ≤ 20 ms,
recall@10 ≥ 0.95). Run:

    .venv/bin/python benchmarks/retrieval_speed.py [--sizes 10000 100000] [--kinds auto flat hnsw ivfpq]
    .venv/bin/python benchmarks/retrieval_speed.py --sizes 1000000 --kinds auto   # the 1M goal
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

from retrieval.config import RetrievalConfig
from retrieval.store import SegmentEntry, SegmentStore

GOAL_P95_MS, GOAL_RECALL = 20.0, 0.95


def clustered_keys(n: int, d: int, rng: np.random.Generator, n_clusters: int = 1000) -> np.ndarray:
    centres = rng.normal(size=(n_clusters, d)).astype(np.float32)
    x = centres[rng.integers(0, n_clusters, n)] + 0.6 * rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def build(kind: str, keys: np.ndarray, root: str, threads: int) -> tuple[SegmentStore, float]:
    faiss.omp_set_num_threads(threads)
    t0 = time.perf_counter()
    store = SegmentStore.create(root, keys.shape[1], config=RetrievalConfig(index_type=kind))
    entries = [SegmentEntry(f"d{i // 50}:{i % 50}", f"d{i // 50}", i % 50, "OTHER") for i in range(len(keys))]
    store.add(entries, keys)
    store.commit()
    return store, time.perf_counter() - t0


def exact_neighbours(keys: np.ndarray, queries: np.ndarray, threads: int) -> list[set[str]]:
    """The true top 10 of each query, by one batched exact search, named as `build` names the keys."""
    faiss.omp_set_num_threads(threads)
    index = faiss.IndexFlatIP(keys.shape[1])
    index.add(keys)
    _, ids = index.search(queries, 10)
    return [{f"d{i // 50}:{i % 50}" for i in row} for row in ids.tolist()]


def index_mb(root: str) -> float:
    return sum(f.stat().st_size for f in Path(root).glob("*.faiss")) / 2**20


def latencies(store: SegmentStore, queries: np.ndarray) -> tuple[np.ndarray, list[set[str]]]:
    times, results = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = store.search(q, 10)[0]
        times.append(time.perf_counter() - t0)
        results.append({s for s, _ in hits})
    return np.array(times) * 1000, results


def measure(kind: str, keys: np.ndarray, queries: np.ndarray, truth: list[set[str]], args) -> None:
    n = len(keys)
    with tempfile.TemporaryDirectory(dir=args.tmp) as root:
        store, build_s = build(kind, keys, root, args.build_threads)
        mb, built = index_mb(root), store.manifest["built"]
        del store
        faiss.omp_set_num_threads(args.threads)
        settings = {
            "ivfpq": [
                ({"ivf_refine_k_factor": f}, f"+refine{f}" if f else "") for f in args.refine_k_factors
            ],
            "hnsw": [
                ({"hnsw_ef_search": ef or None}, f" ef{ef or RetrievalConfig().ef_search(n)}")
                for ef in args.ef_search
            ],
        }.get(built, [({}, "")])
        for knobs, label in settings:
            # search as `ldx ask` does: memory-mapped
            cfg = RetrievalConfig(index_type=kind, **knobs)
            ms, res = latencies(SegmentStore.open(root, mmap=True, config=cfg), queries)
            recall = np.mean([len(a & b) / 10 for a, b in zip(res, truth, strict=True)])
            p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
            name = (f"{kind}->" if kind == "auto" else "") + built + label
            goal = "yes" if p95 <= GOAL_P95_MS and recall >= GOAL_RECALL else "no"
            print(
                f"{n:>8} {name:>18} {build_s:>8.1f} {mb:>8.1f} {p50:>8.3f} {p95:>8.3f} {recall:>10.3f} {goal:>5}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1, help="search threads")
    ap.add_argument("--build-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--kinds", nargs="+", default=["auto", "flat", "hnsw", "ivfpq"], help="index_type values to measure"
    )
    ap.add_argument(
        "--refine-k-factors", type=int, nargs="+", default=[0, 4, 8, 16], help="IVF-PQ re-ranking factors"
    )
    ap.add_argument(
        "--ef-search",
        type=int,
        nargs="+",
        default=[0],
        help="HNSW efSearch values (0: RetrievalConfig.ef_search's rule by size)",
    )
    ap.add_argument("--tmp", default=None, help="where the indexes are written (default: the system's)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"{'keys':>8} {'index':>18} {'build s':>8} {'MB':>8} {'p50 ms':>8} {'p95 ms':>8} {'recall@10':>10} "
        f"{'goal':>5}"
    )
    for n in args.sizes:
        keys = clustered_keys(n, args.dim, rng)
        q = keys[rng.integers(0, n, args.queries)] + 0.05 * rng.normal(size=(args.queries, args.dim)).astype(
            np.float32
        )
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        truth = exact_neighbours(keys, q, args.build_threads)
        for kind in args.kinds:
            measure(kind, keys, q, truth, args)


if __name__ == "__main__":
    main()
