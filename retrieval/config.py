"""Options of the retrieval subsystem: the segment-state store, injection and hybrid search."""

from __future__ import annotations

from pipeline.config import Options


class RetrievalConfig(Options):
    index_type: str = "flat"  # "flat", "ivfpq", "hnsw"
    pooling: str = "mean"  # how a segment's states become one key vector
    states_per_layer: int = 16  # P pooled state vectors stored per segment and layer
    inject_k: int = 2  # retrieved segments injected as extra memory
    inject_cross_document: bool = False
    bm25: bool = True
    dense: bool = True
    sentence_model: bool = True
    rrf_k: int = 60
