"""Semantic anchoring: reset the recurrence memory where a long encoding pass has drifted away from its
document's opening. Off by default (`RetrievalConfig.anchoring`); benchmarks/anchoring.py measures what
it does to the LM loss.

Drift is read from the segment keys the encoder computes anyway (`txl.keys.model_key`: the states the
key head reads, pooled and mapped, the keys the FAISS index stores), so it costs no second pass and reads
Chinese as well as English (a sentence model with an English vocabulary maps most Han characters to
[UNK]). The rule: memory is emptied before segment i (i >= 2) when the key of segment i-1 has a cosine
under `threshold` with the key of segment 0.

Why these two keys:
- causal: segment i's own key exists only after segment i is encoded, which is too late to decide its
  memory; segment i-1's key is known before segment i is stepped. Drift is seen one segment late.
- the opening, not a running centroid: segment 0 is always encoded with empty memory, so its key is the
  same however the document is batched, packed or prefix-shared, and the anchor never moves. A
  centroid would follow a gradual drift and absorb exactly the change anchoring is meant to catch.
- segment 1 is never reset: the only key known before it is segment 0's own, whose cosine with the
  opening is 1 and says nothing.
- cosines are clipped to [-1, 1], so a threshold below -1 never resets and one above 1 resets every
  segment from 2 on, whatever the rounding of the unit keys.

A segment's key is computed while reading with memory, so after a reset the next decision reads a key
computed without the drifted context: a document that stays off its opening keeps resetting, one that
comes back stops.

The encoder (retrieval/inject.py) decides after each segment it finishes; packed segments (several in
one forward call) are exact up to the first segment that a reset falls before: the later segments of
that pack are dropped and encoded again after the reset, so a reset always falls at a boundary the
encoder steps at.
"""

from __future__ import annotations

import numpy as np


def reset_due(opening: np.ndarray, previous: np.ndarray, position: int, threshold: float) -> bool:
    """Empty the memory before segment `position`? `opening`: segment 0's key, `previous`: the key of
    segment `position` - 1 (both unit vectors)."""
    if position < 2:
        return False
    return float(np.clip(np.dot(previous, opening), -1.0, 1.0)) < threshold


def resets(keys: list[np.ndarray], threshold: float) -> list[bool]:
    """Per segment, whether the memory is emptied before it, given a document's keys in order (as the
    encoder computed them with anchoring on)."""
    return [i > 0 and reset_due(keys[0], keys[i - 1], i, threshold) for i in range(len(keys))]
