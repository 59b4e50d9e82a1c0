"""Lanes: many documents encoded side by side, one forward call per step, each with its own memory.

A lane is one document on its way through the encoder. Each step takes the next segment of some lanes
whose segment lengths are alike (little padding), stacks their memories (right-aligned, masked slots on
the left) and runs the model with `lengths`, so every lane's states equal those of its document encoded
alone (txl.model's ragged lanes).
"""

from __future__ import annotations

import math

import numpy as np
import torch


class Lane:
    """A document being encoded: where it is, its memory (lane_carry: [1, W, ...] tensors of real slots only) and
    what it produced so far."""

    def __init__(self, index: int, doc, injector, resets: list[bool], chain: list[str] | None = None,
                 pack_tokens: int = 0):
        self.index, self.doc, self.injector, self.resets, self.chain = index, doc, injector, resets, chain
        self.pack_tokens = pack_tokens  # > 0: the next step may take several segments up to this many tokens
        self.pos = 0
        self.carry: dict = {}
        self.query: np.ndarray | None = None
        self.out: list = []  # retrieval.inject.EncodedSegment, one per segment done
        self._span: tuple[int, int, int] = (-1, 0, 0)  # (pos, end, tokens) of the last next_span

    @property
    def done(self) -> bool:
        return self.pos >= len(self.doc.segments)

    def next_span(self) -> tuple[int, int]:
        """(end, tokens): the next step takes segments pos..end-1 — the next one, and with packing the
        following ones while they fit, none of them starts with a memory reset and nothing could be
        injected into them (their memory still holds the document's first segment)."""
        if self._span[0] != self.pos:
            lens = self.doc.token_ids
            end, n = self.pos + 1, len(lens[self.pos])
            while (end < len(lens) and not self.resets[end] and n + len(lens[end]) <= self.pack_tokens
                   and (self.injector is None or self.injector.idle_after([len(x) for x in lens[self.pos : end]]))):
                n += len(lens[end])
                end += 1
            self._span = (self.pos, end, n)
        return self._span[1], self._span[2]

    @property
    def next_len(self) -> int:
        return self.next_span()[1]

    @property
    def mem_width(self) -> int:
        return self.carry["mems"][0].size(1) if self.carry else 0


def bucket(n: int) -> int:
    """Lengths up to 16 share one bucket, then each spans a factor 2^(1/3): on real judgments a step
    pads 19% of its tokens instead of 40% with power-of-two buckets, for 60% more (smaller) steps."""
    return max(12, round(3 * math.log2(max(n, 1))))


def pick(lanes: list[Lane], max_lanes: int, max_tokens: int) -> list[Lane]:
    """The lanes of the next step: the largest group whose next segments have similar lengths, so little
    of the batch is padding; at most max_lanes of them and about max_tokens tokens in all."""
    groups: dict[int, list[Lane]] = {}
    for lane in lanes:
        groups.setdefault(bucket(lane.next_len), []).append(lane)
    group = max(groups.values(), key=len)
    width = max(lane.next_len for lane in group)
    return group[: max(1, min(max_lanes, max_tokens // width))]


def stack_lanes(parts: list[torch.Tensor], w: int, fill, right: bool = True) -> torch.Tensor:
    """[1, n_i, ...] tensors -> [B, w, ...] with `fill` in the free slots, each part right-aligned (memory
    ends at the newest slot) or left-aligned (retrieved slots); one copy of each part."""
    first = parts[0]
    out = torch.full((len(parts), w, *first.shape[2:]), fill, dtype=first.dtype, device=first.device)
    for b, p in enumerate(parts):
        n = p.size(1)
        if n:
            out[b, slice(w - n, w) if right else slice(0, n)] = p[0]
    return out


def batch_memory(lanes: list[Lane], model, device: torch.device) -> dict:
    """The lanes' memories as one batch, each left-padded with masked slots to the widest."""
    w = max(lane.mem_width for lane in lanes)
    if w == 0:
        return {}
    cfg = model.cfg
    kv_dim = 2 * cfg.n_head * cfg.d_head
    dtype = next(model.parameters()).dtype
    empty = {
        "mems": (torch.zeros(1, 0, (cfg.n_layer + 1) * cfg.d_model, dtype=dtype, device=device), cfg.n_layer + 1),
        "mem_kv": (torch.zeros(1, 0, cfg.n_layer * kv_dim, dtype=dtype, device=device), cfg.n_layer),
        "mem_mask": torch.zeros(1, 0, dtype=torch.bool, device=device),
        "mem_types": torch.zeros(1, 0, dtype=torch.long, device=device),
        "mem_connective": torch.zeros(1, 0, dtype=torch.bool, device=device),
    }
    fills = {"mems": 0.0, "mem_kv": 0.0, "mem_mask": False, "mem_types": -1, "mem_connective": False}
    carries = [lane.carry or empty for lane in lanes]
    out: dict = {}
    for key, fill in fills.items():
        if all(c.get(key) is None for c in carries):
            continue
        parts = [c.get(key) if c.get(key) is not None else empty[key] for c in carries]
        if isinstance(parts[0], tuple):  # layers fused by lane_carry: stack once, hand out per-layer views
            out[key] = list(stack_lanes([p[0] for p in parts], w, fill).chunk(parts[0][1], -1))
        else:
            out[key] = stack_lanes(parts, w, fill)
    return out


def lane_carry(carry: dict, b: int, keep: int) -> dict:
    """Lane b's real memory slots (the newest `keep`) out of a batch's carry, as tensors of its own: a
    view would keep the whole batch's memory alive for as long as the lane lives. A per-layer list
    becomes one tensor (the layers side by side, and their count): one copy per lane instead of one
    per layer, here and in batch_memory."""
    out: dict = {}
    for k, v in carry.items():
        if isinstance(v, list):
            out[k] = (torch.cat([x[b : b + 1, -keep:] for x in v], -1), len(v))
        elif v is not None:
            out[k] = v[b : b + 1, -keep:].clone()
    return out
