"""The dense arm of `ldx ask` over the run's segment-state store."""

from __future__ import annotations

import numpy as np

from retrieval.encoder import encode_query
from retrieval.hybrid import Passage
from retrieval.store import SegmentStore


class StoreArm:
    """Dense arm over the segment-state store: the query is encoded by the same model as the segments."""

    def __init__(self, store: SegmentStore, model, tokenizer, passages: list[Passage], pooling: str):
        self.store, self.model, self.tokenizer, self.pooling = store, model, tokenizer, pooling
        self.segment_ids = [p.segment_id for p in passages]
        self.row_of = {s: i for i, s in enumerate(self.segment_ids)}

    def top(self, query: str, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        q = encode_query(self.model, self.tokenizer, query, self.pooling)
        only = None if allowed is None else {self.segment_ids[i] for i in np.flatnonzero(allowed)}
        hits = [(self.row_of[s], sc) for s, sc in self.store.search(q, n, only=only)[0] if s in self.row_of]
        return np.array([r for r, _ in hits], dtype=np.int64), np.array(
            [s for _, s in hits], dtype=np.float32
        )
