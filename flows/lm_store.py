"""The retrieval layer's segment store behind `ldx eval lm`'s retrieved-memory setting."""

from __future__ import annotations

from pathlib import Path

import torch

from pipeline.records import BLOCK_TYPE_IDS, BlockType
from retrieval.config import RetrievalConfig
from retrieval.store import SegmentEntry, SegmentStore
from txl.windows import PastWindows, pool_window


class StorePastWindows(PastWindows):
    """txl.windows.PastWindows kept in a retrieval SegmentStore (FAISS keys, pooled fp16 states) in
    place of memory: what `ldx eval lm` retrieves from. One store per document, under `root`."""

    def __init__(self, root: Path, config: RetrievalConfig):
        super().__init__(pool=config.states_per_layer)
        self.root = root
        self.config = config
        self.store: SegmentStore | None = None
        self.doc = 0

    def _clear(self) -> None:
        self.store = None
        self.doc += 1

    def _put(self, n: int, key: torch.Tensor, layers: torch.Tensor, types: torch.Tensor) -> None:
        pooled, _ = pool_window(layers, types, self.pool)
        if self.store is None:
            shape = (layers.size(0), self.pool, layers.size(2))
            self.store = SegmentStore.create(self.root / f"doc{self.doc}", key.numel(), shape, self.config)
        names = {i: str(t) for t, i in BLOCK_TYPE_IDS.items()}
        main_type = names[int(types.mode().values)]  # a stored segment has one block type
        self.store.add([SegmentEntry(f"w:{n}", "doc", n, main_type)], key.cpu().numpy()[None], [pooled])

    def _search(self, query: torch.Tensor, below: int, k: int) -> list[int]:
        hits = self.store.search(query.cpu().numpy()[None], k, only={f"w:{i}" for i in range(below)})[0]
        return sorted(int(sid[2:]) for sid, _ in hits)

    def _get(self, numbers: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        ids = [f"w:{n}" for n in numbers]
        states, mask = self.store.states(ids)  # [k, L, P, d], [k, P]
        out = []
        for i, sid in enumerate(ids):
            kept = torch.from_numpy(mask[i])
            layers = torch.from_numpy(states[i].astype("float32"))[:, kept]  # [L, n', d]
            t = BLOCK_TYPE_IDS[BlockType(self.store.entry(sid)["block_type"])]
            out.append((layers, torch.full((int(kept.sum()),), t)))
        return out
