"""Options of the retrieval subsystem: the segment-state store, injection and hybrid search."""

from __future__ import annotations

from typing import Literal

from pipeline.config import Options


class RetrievalConfig(Options):
    index_type: Literal["flat", "ivfpq", "hnsw"] = "flat"  # trade-offs: retrieval/store.py's docstring
    pooling: Literal["mean", "max", "first", "last"] = "mean"  # how a segment's states become one key vector
    states_per_layer: int = 16  # P pooled state vectors stored per segment and layer
    hnsw_m: int = 32  # graph degree of the HNSW index
    ivf_nlist: int = 1024  # IVF cells (fewer when the store is small)
    ivf_nprobe: int = 32  # cells visited per query
    pq_m: int = 32  # bytes per key in the IVF-PQ index (must divide the key dimension)
    inject_k: int = 2  # retrieved segments injected as extra memory
    inject_cross_document: bool = False
    bm25: bool = True
    dense: bool = True
    sentence_model: bool = True
    rrf_k: int = 60
    anchoring: bool = False  # reset memory when a segment drifts from the document's opening
    anchoring_threshold: float = 0.2  # cosine (sentence model) under which memory is reset
    cache_bytes: int = 512 * 2**20  # session cache of document states
