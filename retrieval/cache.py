"""The session cache of document states: a question about a document already read costs no re-encoding.

LRU over documents, bounded in bytes. On CUDA the most recent documents stay on the GPU up to
`gpu_bytes`; older ones are moved to CPU memory instead of being dropped, and moved back when used.
"""

from __future__ import annotations

from collections import OrderedDict

import torch


def _nbytes(states: list[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in states)


class DocStateCache:
    def __init__(self, max_bytes: int, gpu_bytes: int | None = None):
        self.max_bytes = max_bytes
        self.gpu_bytes = max_bytes // 2 if gpu_bytes is None else gpu_bytes
        self._items: OrderedDict[str, list[torch.Tensor]] = OrderedDict()
        self.hits = self.misses = self.offloaded = 0

    @property
    def nbytes(self) -> int:
        return sum(_nbytes(v) for v in self._items.values())

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._items

    def get(self, doc_id: str, device: torch.device | str | None = None) -> list[torch.Tensor] | None:
        states = self._items.get(doc_id)
        if states is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(doc_id)
        if device is not None and states and states[0].device != torch.device(device):
            states = [t.to(device) for t in states]
            self._items[doc_id] = states
            self._offload()
        return states

    def put(self, doc_id: str, states: list[torch.Tensor]) -> None:
        if _nbytes(states) > self.max_bytes:
            return  # larger than the whole budget: keeping it would evict everything else for nothing
        self._items[doc_id] = states
        self._items.move_to_end(doc_id)
        while self.nbytes > self.max_bytes:
            self._items.popitem(last=False)
        self._offload()

    def _offload(self) -> None:
        """Move the least recent GPU-resident documents to CPU once the GPU share is exceeded."""
        on_gpu = 0
        for doc_id in reversed(self._items):
            states = self._items[doc_id]
            if not states or states[0].device.type != "cuda":
                continue
            on_gpu += _nbytes(states)
            if on_gpu > self.gpu_bytes:
                self._items[doc_id] = [t.to("cpu", non_blocking=True) for t in states]
                self.offloaded += 1
