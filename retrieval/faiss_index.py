"""FAISS indexes of the segment-state store (retrieval/store.py): which kind, how each is built.

Index choice (`retrieval.index_type`): "auto", the default, keeps a store flat until it holds
`exact_below_keys` keys (50k; exact search grows linearly with the keys: p50 0.45 ms at 10k, 8.5 ms at
100k, one thread, 2026-12 on the 2-core machine) and switches it to HNSW from there (`wanted_kind`;
0.29 ms p50, 0.44 ms p95 at recall@10 0.997 at 100k, built in 15 s on 2 threads); a store records the
choice it was made with, so one made "flat" stays flat. The figures below are older measurements. "flat" is exact and supports delete in place. "hnsw" answers
faster at millions of keys at about 1.5× the memory of flat, but cannot delete in place: a delete rebuilds
the graph from the stored vectors. "ivfpq" visits `ivf_nprobe` of `ivf_nlist` cells and
scores keys by their `pq_m`-byte codes (16× smaller than fp32 at d = 256); it deletes in place and
needs at least `IVFPQ_MIN_TRAIN` keys to train its codebooks, so a smaller store stays flat until then.
PQ distances are coarse: alone, recall@10 against flat is 0.495 at 100k keys. With
`ivf_refine_k_factor` = f > 0 (default 8), the IVF-PQ index proposes k·f candidates and their exact
inner products, from a flat copy of the keys, choose the top k: recall@10 0.998 at f = 8 (0.900 at 4),
p50 1.6 ms against 65 ms for flat (benchmarks/retrieval_speed.py, 100k clustered keys, d = 256, one
thread). The price is memory: the refine copy keeps every key in fp32 (d·4 bytes, 1 KB at d = 256, next
to 32 bytes of code; 98 MB of the 105 MB at 100k keys), so IVF-PQ with refine is a speed choice, not a
memory one; with f = 0 no copy is kept and the index stays compressed. HNSW is as fast (0.38 ms, recall
0.988) but builds slower (200 s against 140 s at 100k) and rebuilds on delete.

faiss is imported inside the functions, as retrieval/store.py does, so that reading a store's metadata
and states does not load it (about 30-50 ms, measured with python -X importtime, and its OpenMP runtime).
"""

from __future__ import annotations

from retrieval.config import RetrievalConfig

IVFPQ_MIN_TRAIN = 256 * 39  # faiss's rule of thumb: 39 training points per centroid of an 8-bit codebook


def wanted_kind(index_type: str, n_keys: int, cfg: RetrievalConfig) -> str:
    """The kind of index a store made with `index_type` should have once it holds `n_keys` keys."""
    if index_type == "auto":
        return "hnsw" if n_keys >= cfg.exact_below_keys else "flat"
    if index_type == "ivfpq" and n_keys < IVFPQ_MIN_TRAIN:
        return "flat"
    return index_type


def new_index(kind: str, dim: int, cfg: RetrievalConfig, n_train: int):
    """An empty index of `kind` for `dim`-dimensional keys; IVF-PQ only with enough keys to train it
    (`n_train`), else flat."""
    # lazy, a start-up cost: faiss adds ~30 ms and its OpenMP runtime (measured); see the module docstring
    import faiss

    if kind == "hnsw":
        return faiss.IndexIDMap2(faiss.IndexHNSWFlat(dim, cfg.hnsw_m, faiss.METRIC_INNER_PRODUCT))
    if kind == "ivfpq" and n_train >= IVFPQ_MIN_TRAIN:
        nlist = max(1, min(cfg.ivf_nlist, n_train // 39))
        ivf = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, cfg.pq_m, 8, faiss.METRIC_INNER_PRODUCT)
        ivf.nprobe = min(cfg.ivf_nprobe, nlist)
        # ids stay in the inverted lists: IndexIDMap2's delete assumes the inner index renumbers its
        # rows like a flat index does, which IVF does not; the hash table lets keys be reconstructed by id
        ivf.set_direct_map_type(faiss.DirectMap.Hashtable)
        return ivf
    return flat_index(dim)


def flat_index(dim: int):
    """Exact inner-product search over int64 ids."""
    # lazy, a start-up cost: faiss adds ~30 ms and its OpenMP runtime (measured); see the module docstring
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def index_kind(index) -> str:
    """Which of the kinds an index is (what the manifest records as `built`)."""
    # lazy, a start-up cost: faiss adds ~30 ms and its OpenMP runtime (measured); see the module docstring
    import faiss

    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap) else index
    if isinstance(inner, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(inner, faiss.IndexIVF):
        return "ivfpq"
    return "flat"
