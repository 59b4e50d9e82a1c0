"""Memory injection: while a document is encoded segment by segment, the most similar segments that
have left the model's memory (same document, and optionally other documents) come back as retrieved
memory slots, from the compact states of the segment-state store.

The query for segment n is the key of segment n-1: segment n's own states do not exist before it is
encoded, and neighbouring segments are the best cheap guess of what it will need. Each encoded segment
is added to the store at once (uncommitted), so later segments of the same document can retrieve it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from pipeline.records import BLOCK_TYPE_IDS, BlockType, Segment
from retrieval.config import RetrievalConfig
from retrieval.pooling import pool_key, pool_states
from retrieval.store import SegmentEntry, SegmentStore


@dataclass
class EncodedSegment:
    segment_id: str
    key: np.ndarray  # [d] unit vector
    hidden: torch.Tensor  # [T, d] last layer, on the model's device
    retrieved: list[str] = field(default_factory=list)  # segment_ids injected while encoding it


def retrieved_inputs(
    store: SegmentStore, segment_ids: list[str], device: torch.device, dtype: torch.dtype = torch.float32
) -> dict:
    """The model's retrieved-memory keywords for the given stored segments, in the given order:
    `retrieved` (n_layer of [1, R, d]), `retrieved_types` [1, R] and `retrieved_mask` [1, R], R = k·P."""
    if not segment_ids:
        return {}
    states, mask = store.states(segment_ids)  # [k, L, P, d], [k, P]
    k, n_layers, p, d = states.shape
    per_layer = torch.from_numpy(states.astype(np.float32)).permute(1, 0, 2, 3).reshape(n_layers, 1, k * p, d)
    types = [BLOCK_TYPE_IDS[BlockType(store.entry(s)["block_type"])] for s in segment_ids]
    return {
        "retrieved": [per_layer[i].to(device=device, dtype=dtype) for i in range(n_layers)],
        "retrieved_types": torch.tensor(types, device=device).repeat_interleave(p)[None],
        "retrieved_mask": torch.from_numpy(mask.reshape(1, k * p)).to(device),
    }


class Injector:
    """Chooses the stored segments to inject for the next segment of one document."""

    def __init__(self, store: SegmentStore, doc_id: str, config: RetrievalConfig, mem_len: int):
        self.store = store
        self.doc_id = doc_id
        self.k = config.inject_k
        self.cross_document = config.inject_cross_document
        self.mem_len = mem_len
        self._done: list[tuple[str, int]] = []  # (segment_id, n_tokens) since the memory was last empty
        self._flushed: list[str] = []  # segments encoded before a memory reset
        self._other_docs: set[str] | None = None

    def _evicted(self) -> list[str]:
        """This document's encoded segments none of whose tokens are still in memory."""
        in_memory, out = 0, list(self._flushed)
        for sid, n in reversed(self._done):
            if in_memory >= self.mem_len:
                out.append(sid)
            in_memory += n
        return out

    def choose(self, query: np.ndarray | None) -> list[str]:
        if self.k <= 0 or query is None:
            return []
        allowed = set(self._evicted())
        if self.cross_document:
            if self._other_docs is None:  # the corpus outside this document does not change meanwhile
                self._other_docs = {r["segment_id"] for r in self.store.entries() if r["doc_id"] != self.doc_id}
            allowed |= self._other_docs
        if not allowed:
            return []
        return [sid for sid, _ in self.store.search(query, self.k, only=allowed)[0]]

    def record(self, segment_id: str, n_tokens: int) -> None:
        self._done.append((segment_id, n_tokens))

    def memory_reset(self) -> None:
        self._flushed += [sid for sid, _ in self._done]
        self._done = []


@torch.no_grad()
def encode_document(
    model,
    segments: list[Segment],
    token_ids: list[list[int]],
    store: SegmentStore | None = None,
    config: RetrievalConfig | None = None,
    connective_masks: list[list[bool]] | None = None,
) -> list[EncodedSegment]:
    """Encode one document's segments in order with recurrence memory and, when a store is given,
    injection; each segment's key and compact states are added to the store (commit is the caller's)."""
    cfg = config or RetrievalConfig()
    device = next(model.parameters()).device
    mem_len = model.cfg.mem_len
    injector = Injector(store, segments[0].doc_id, cfg, mem_len) if store is not None and segments else None
    resets = [False] * len(segments)
    if cfg.anchoring:
        from retrieval.anchoring import drift_resets

        resets = drift_resets([s.text for s in segments], cfg.anchoring_threshold)
    carry: dict = {}
    out_segments: list[EncodedSegment] = []
    query: np.ndarray | None = None
    # Each layer's input for the current segment, whole: out.mems keeps only the newest mem_len slots,
    # which can be fewer than a segment's tokens.
    layer_inputs: list[torch.Tensor] = []
    hooks = [blk.register_forward_pre_hook(lambda _m, args: layer_inputs.append(args[0])) for blk in model.layers]
    try:
        for i, (seg, ids) in enumerate(zip(segments, token_ids, strict=True)):
            if resets[i]:
                carry = {}
                if injector is not None:
                    injector.memory_reset()
            x = torch.tensor([ids], device=device)
            types = torch.full_like(x, BLOCK_TYPE_IDS[BlockType(seg.type)])
            kwargs = dict(carry)
            if connective_masks is not None:
                kwargs["connective_mask"] = torch.tensor([connective_masks[i]], device=device)
            picked = injector.choose(query) if injector is not None else []
            if picked:
                kwargs.update(retrieved_inputs(store, picked, device))
            layer_inputs.clear()
            out = model(x, block_types=types, **kwargs)
            carry = out.carry()
            hidden = out.hidden[0]
            key = pool_key(hidden.float().cpu().numpy(), cfg.pooling)
            if store is not None:
                states = torch.stack([h[0] for h in layer_inputs]).float().cpu().numpy()  # [n_layer, T, d]
                store.add(
                    [SegmentEntry(seg.segment_id, seg.doc_id, seg.seg_idx, str(seg.type))],
                    key[None],
                    [pool_states(states, cfg.states_per_layer)],
                )
                injector.record(seg.segment_id, x.size(1))
            query = key
            out_segments.append(EncodedSegment(seg.segment_id, key, hidden, picked))
    finally:
        for h in hooks:
            h.remove()
    return out_segments
