"""From a segment's encoder states to what a retrieval store keeps: one key vector, and ≤ P states per
layer. Used by the retrieval layer (store, injection) and by the trainer's own injection (txl.train)."""

from __future__ import annotations

import numpy as np

POOLINGS = ("mean", "max", "first", "last", "idf", "bm25")
KEY_POOLINGS = ("mean", "idf", "bm25")  # what a key head may read (txl/keys.py, `token_weights`)
WEIGHTED = ("idf", "bm25")  # the poolings that weight each token (`token_weights`)
# what `ldx train keys` reads by default, as the shipped keys.pt does (data/models/README.md): the input
# of layer 0 (the embedded tokens), weighted by inverse document frequency with BM25's saturation
KEY_LAYER, KEY_POOLING = 0, "bm25"
BM25_K1 = 1.2  # BM25's usual saturation constant, not tuned here
# the head's AdamW learning rate, chosen by validation MRR among 2e-3, 5e-4, 2e-4 (benchmarks/key_seeds.py --lr)
KEY_LR = 5e-4


def token_weights(ids, idf: np.ndarray, pooling: str) -> np.ndarray | None:
    """[T] weights of a segment's tokens for a weighted key pooling, None for "mean". "idf": each
    token's inverse document frequency. "bm25": a token that occurs tf times in the segment weighs
    idf · (k1 + 1) / (tf + k1) each time, so its whole share grows as BM25's term frequency does,
    tf (k1 + 1) / (tf + k1), and a word repeated through a passage stops outweighing the rest."""
    if pooling not in WEIGHTED:
        return None
    ids = np.asarray(ids, dtype=np.int64)
    weights = np.asarray(idf, dtype=np.float32)[ids]
    if pooling == "bm25":
        _, where, counts = np.unique(ids, return_inverse=True, return_counts=True)
        weights = weights * (BM25_K1 + 1) / (counts[where] + BM25_K1)
    return weights


def pool_key(hidden: np.ndarray, mode: str = "mean", weights: np.ndarray | None = None) -> np.ndarray:
    """[T, d] states of one segment -> one unit-norm [d] key (inner product = cosine in FAISS). A weighted
    mode ("idf", "bm25") takes `weights` [T], one per token (`token_weights`); a segment whose weights are
    all zero (special tokens only) falls back to the plain mean."""
    h = np.asarray(hidden, dtype=np.float32)
    if h.ndim != 2 or h.shape[0] == 0:
        raise ValueError(f"expected [T, d] states with T > 0, got shape {h.shape}")
    if mode in WEIGHTED:
        if weights is None or len(weights) != h.shape[0]:
            raise ValueError(f"{mode} pooling needs one weight per token")
        w = np.asarray(weights, dtype=np.float32)
        v = (w @ h) / float(w.sum()) if w.sum() > 0 else h.mean(0)
    elif mode == "mean":
        v = h.mean(0)
    elif mode == "max":
        v = h.max(0)
    elif mode == "first":
        v = h[0]
    elif mode == "last":
        v = h[-1]
    else:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {mode!r}")
    return v / max(float(np.linalg.norm(v)), 1e-12)


def pool_states(states: np.ndarray, p: int) -> np.ndarray:
    """[L, T, d] per-layer states -> [L, min(p, T), d]: the means of p contiguous, near-equal token runs.

    Contiguous runs keep the states in reading order, so a retrieved segment still reads left to right
    when the model attends over its slots.
    """
    s = np.asarray(states, dtype=np.float32)
    if s.ndim != 3 or s.shape[1] == 0:
        raise ValueError(f"expected [L, T, d] states with T > 0, got shape {s.shape}")
    if s.shape[1] <= p:  # a run per token: its mean is the state itself (a whole window kept, as shipped)
        return s.copy()
    return np.stack([s[:, r].mean(1) for r in token_runs(s.shape[1], p)], axis=1)


def token_runs(n: int, p: int) -> list[np.ndarray]:
    """The positions of the min(p, n) contiguous, near-equal runs that `pool_states` averages."""
    return np.array_split(np.arange(n), min(p, n))
