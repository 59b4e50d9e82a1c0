"""Identical document prefixes are encoded once: judgments of one court open with the same header
lines, and a second-instance judgment may repeat the first one's opening word for word.

A prefix is named by a chain hash over its segments (block type, token ids, connective flags), so two
documents share the hash of position n exactly when their first n + 1 segments are the same input to
the encoder (anchoring's memory resets follow from the prefix's own keys, so they are the same too).
While a stream is encoded, a position whose hash has been seen in two documents is kept (the lane's memory after it and what the segment produced), and a lane whose next
position is kept skips it. Lanes at the same position of one shared prefix do not step together: one
encodes it, the others follow a step later from what it kept. Without cross-document injection a
segment's states depend only on its document's earlier segments, so the reused states equal encoding
them again. A pack is named by where it starts and the hash of its last segment (`Pack`). One that an
anchoring reset cut short is kept under the name of the pack as planned, with the segments up to the
reset and no memory after them: a lane planning the same pack meets the same reset.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass

import numpy as np
import torch

from txl.memory import Memory

Pack = tuple[str, int]  # (chain hash of a pack's last segment, position of its first segment)


@dataclass
class Reused:
    """What one prefix segment produced; `retrieved` holds seg_idx of injected segments of the same document."""

    key: np.ndarray
    hidden: torch.Tensor | None  # None where the stream keeps no hidden states
    states: np.ndarray | None  # compact pooled states for the store
    n_tokens: int
    retrieved: list[int]


def chain_hashes(
    types: list[str], token_ids: list[list[int]], connective: list[list[bool]] | None
) -> list[str]:
    out, h = [], b""
    for i, ids in enumerate(token_ids):
        m = hashlib.blake2b(h, digest_size=16)
        m.update(types[i].encode())
        m.update(np.asarray(ids, dtype=np.int32).tobytes())
        if connective is not None:
            m.update(np.packbits(np.asarray(connective[i], dtype=bool)).tobytes())
        h = m.digest()
        out.append(h.hex())
    return out


def _nbytes(x) -> int:
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, np.ndarray):
        return x.nbytes
    return 0


class PrefixCache:
    """Shared prefix positions of a stream, least recently used first out once over `max_bytes`."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.seen: Counter[str] = Counter()
        self._items: OrderedDict[Pack, tuple[list[Reused], Memory | None, int]] = OrderedDict()
        self._bytes = 0
        self.reused_segments = 0
        self.reused_tokens = 0

    def admit(self, chain: list[str]) -> None:
        self.seen.update(chain)

    def wanted(self, pack: Pack) -> bool:
        return self.seen[pack[0]] >= 2 and pack not in self._items

    def put(self, pack: Pack, items: list[Reused], memory: Memory | None) -> None:
        """Keep what the pack produced (one Reused per segment) and the memory after it (None: emptied
        by a reset that cut the pack after `items`)."""
        size = sum(_nbytes(x.hidden) + _nbytes(x.states) for x in items)
        size += memory.nbytes() if memory is not None else 0
        if size > self.max_bytes:
            return
        self._items[pack] = (items, memory, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, _, old) = self._items.popitem(last=False)
            self._bytes -= old

    def get(self, pack: Pack) -> tuple[list[Reused], Memory | None] | None:
        """What the pack produced and the memory after it, if kept."""
        hit = self._items.get(pack)
        if hit is None:
            return None
        self._items.move_to_end(pack)
        self.reused_segments += len(hit[0])
        self.reused_tokens += sum(x.n_tokens for x in hit[0])
        return hit[0], hit[1]


def shared_prefix_saving(chains: list[list[str]], lengths: list[list[int]]) -> dict[str, float]:
    """What a corpus saves by encoding shared prefixes once, without a model: the documents' chain
    hashes and their segments' token counts in, segment and token shares out."""
    seen: set[str] = set()
    total = reused = tokens = reused_tokens = 0
    for chain, lens in zip(chains, lengths, strict=True):
        for h, n in zip(chain, lens, strict=True):
            total, tokens = total + 1, tokens + n
            if h in seen:
                reused, reused_tokens = reused + 1, reused_tokens + n
            seen.add(h)
    return {
        "segments": total,
        "segments_reused": reused,
        "segment_saving": reused / max(1, total),
        "token_saving": reused_tokens / max(1, tokens),
    }
