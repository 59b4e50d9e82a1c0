"""Lanes: many documents encoded side by side, one forward call per step, each with its own memory.

A lane is one document on its way through the encoder. Each step takes the next segment of some lanes
whose segment lengths are alike (little padding), stacks their memories (txl.memory.Memory.stack:
right-aligned, masked slots on the left) and runs the model with `lengths`, so every lane's states equal
those of its document encoded alone (txl.model's ragged lanes).
"""

from __future__ import annotations

import math

import numpy as np

from txl.memory import Memory


class Lane:
    """A document being encoded: where it is, its memory (Memory.lane: [1, W, ...] real slots only) and
    what it produced so far."""

    def __init__(
        self,
        index: int,
        doc,
        injector,
        chain: list[str] | None = None,
        pack_tokens: int = 0,
        anchoring: float | None = None,
    ):
        self.index, self.doc, self.injector, self.chain = index, doc, injector, chain
        self.pack_tokens = pack_tokens  # > 0: the next step may take several segments up to this many tokens
        self.anchoring = anchoring  # the threshold of retrieval.anchoring, None = off
        self.reset_at = -1  # the last segment the memory was emptied before
        self.pos = 0
        self.memory: Memory | None = None
        self.query: np.ndarray | None = None
        self.out: list = []  # retrieval.inject.EncodedSegment, one per segment done
        self._span: tuple[int, int, int] = (-1, 0, 0)  # (pos, end, tokens) of the last next_span

    @property
    def done(self) -> bool:
        return self.pos >= len(self.doc.segments)

    def next_span(self) -> tuple[int, int]:
        """(end, tokens): the next step takes segments pos..end-1 — the next one, and with packing the
        following ones while they fit and nothing could be injected into them (their memory still holds
        the document's first segment). A memory reset that anchoring decides inside the pack cuts it
        there (retrieval.inject._step)."""
        if self._span[0] != self.pos:
            lens = self.doc.token_ids
            end, n = self.pos + 1, len(lens[self.pos])
            while (
                end < len(lens)
                and n + len(lens[end]) <= self.pack_tokens
                and (
                    self.injector is None or self.injector.idle_after([len(x) for x in lens[self.pos : end]])
                )
            ):
                n += len(lens[end])
                end += 1
            self._span = (self.pos, end, n)
        return self._span[1], self._span[2]

    @property
    def next_len(self) -> int:
        return self.next_span()[1]

    @property
    def mem_width(self) -> int:
        return self.memory.width if self.memory is not None else 0


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
