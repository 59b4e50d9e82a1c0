"""The retrieval layer's segment store behind `ldx eval lm`'s retrieved-memory setting."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from pipeline.records import BLOCK_TYPE_IDS, BlockType
from retrieval.config import RetrievalConfig
from retrieval.store import SegmentEntry, SegmentStore
from txl.pooling import pool_states


class StorePastWindows:
    """A lane's earlier windows in a retrieval SegmentStore (FAISS keys, pooled fp16 states): what
    `ldx eval lm` retrieves from, in place of txl.evaluate's in-memory stand-in. One store per
    document, under a temporary folder."""

    def __init__(self, root: Path, config: RetrievalConfig):
        self.root = root
        self.config = config
        self.store: SegmentStore | None = None
        self.n = 0
        self.doc = 0

    def clear(self) -> None:
        self.store, self.n = None, 0
        self.doc += 1

    def add(self, key, states, types) -> None:
        # the inputs of the n_layer layers, as the retrieval layer stores them
        layers = np.stack([s.float().cpu().numpy() for s in states[:-1]])
        pooled = pool_states(layers, self.config.states_per_layer)
        if self.store is None:
            shape = (layers.shape[0], self.config.states_per_layer, layers.shape[2])
            self.store = SegmentStore.create(self.root / f"doc{self.doc}", key.numel(), shape, self.config)
        names = {i: str(t) for t, i in BLOCK_TYPE_IDS.items()}
        main_type = names[int(types.mode().values)]
        self.store.add([SegmentEntry(f"w:{self.n}", "doc", self.n, main_type)], key.cpu().numpy()[None], [pooled])
        self.n += 1

    def pick(self, query, skip_recent: int, k: int):
        allowed = {f"w:{i}" for i in range(self.n - skip_recent)}
        if not allowed:
            return []
        hits = self.store.search(query.cpu().numpy()[None], k, only=allowed)[0]
        ids = sorted((sid for sid, _ in hits), key=lambda sid: int(sid[2:]))
        states, mask = self.store.states(ids)
        out = []
        for i, sid in enumerate(ids):
            t = BLOCK_TYPE_IDS[BlockType(self.store.entry(sid)["block_type"])]
            kept = torch.from_numpy(mask[i])
            layers = [torch.from_numpy(states[i, layer].astype("float32"))[kept] for layer in range(states.shape[1])]
            out.append((layers, torch.full((int(kept.sum()),), t)))
        return out
