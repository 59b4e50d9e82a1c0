"""The retrieval layer's segment store behind `ldx eval lm`'s retrieved-memory setting."""

from __future__ import annotations

from pathlib import Path

import torch

from retrieval.config import RetrievalConfig
from retrieval.store import SegmentStore
from retrieval.store_windows import StoreWindows


class StorePastWindows(StoreWindows):
    """txl.windows.PastWindows kept in a retrieval SegmentStore (FAISS keys, pooled fp16 states) in
    place of memory: what `ldx eval lm` retrieves from. One store per document, under `root`."""

    def __init__(self, root: Path, config: RetrievalConfig):
        super().__init__(None, "doc", config.states_per_layer, config.state_layers)
        self.root = root
        self.config = config
        self.doc = 0

    def _clear(self) -> None:
        super()._clear()
        self.store = None
        self.doc += 1

    def _put(self, n: int, key: torch.Tensor, layers: torch.Tensor, types: torch.Tensor) -> None:
        if self.store is None:
            shape = (layers.size(0), self.pool, layers.size(2))
            self.store = SegmentStore.create(
                self.root / f"doc{self.doc}", key.numel(), shape, self.config, self.layers
            )
        super()._put(n, key, layers, types)

    def _search(self, query: torch.Tensor, below: int, k: int) -> list[str]:
        """In reading order, as txl.windows.PastWindows returns them."""
        order = {sid: i for i, sid in enumerate(self.ids)}
        return sorted(super()._search(query, below, k), key=order.__getitem__)
