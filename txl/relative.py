"""Relative positions and the key axis of Transformer-XL attention, shared by the model and its
diagnostics (txl.diagnostics reads the same facts without importing the model).

The key axis of every layer is [retrieved R; memory M; current segment T]: K' = R + M + T columns."""

from __future__ import annotations

from dataclasses import dataclass

import torch


def sinusoid(pos: torch.Tensor, d: int) -> torch.Tensor:
    """[K] float distances -> [K, d] embeddings, sin half then cos half (the reference layout)."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0.0, d, 2.0, device=pos.device) / d))
    angles = pos.float()[:, None] * inv_freq[None, :]  # [K, d/2]
    return torch.cat([angles.sin(), angles.cos()], -1)  # [K, d]


def rel_shift(padded: torch.Tensor) -> torch.Tensor:
    """The pad-and-reshape trick of the reference: [.., T, K+1] position scores whose column 0 is zero
    padding and column c+1 holds distance K-1-c, read as [.., K+1, T] minus its first row, read back as
    [.., T, K] -> indexed by (query i, key j) with distance i + (K - T) - j. A strided view, no copy;
    entries with j > i + (K - T) are garbage and must be masked."""
    *lead, t, k1 = padded.shape
    padded = padded.contiguous()
    return padded.as_strided(
        (*lead, t, k1 - 1), (*padded.stride()[:-2], k1 - 1, 1), padded.storage_offset() + t
    )


def position_scores(qv: torch.Tensor, rk: torch.Tensor, n_r: int) -> torch.Tensor:
    """(q + v)·W_kR R for every (query, key): qv [B, H, T, dh], rk [H, dh, 1 + K (+1 far bucket if n_r)]
    whose column 0 is zero (W_kR of a zero row, so the scores come out already padded)
    -> [B, H, T, n_r + K]. Only [T, K] scores are formed, never a [T, K, d] position tensor."""
    scores = rel_shift(qv @ (rk[..., :-1] if n_r else rk))  # [B, H, T, K]
    if n_r:
        b, h, t, _ = qv.shape
        scores = torch.cat([(qv @ rk[..., -1:]).expand(b, h, t, n_r), scores], -1)  # [B, H, T, n_r + K]
    return scores


@dataclass
class Slots:
    """One part of the key axis (retrieved, memory or the current segment): its width and what is known
    of its slots; None = unknown type / no connective / all visible."""

    n: int
    types: torch.Tensor | None = None  # [B|1, n] long block type ids, -1 = unknown
    connective: torch.Tensor | None = None  # [B, n] bool
    visible: torch.Tensor | None = None  # [B|1, n] bool


@dataclass
class KeyAxis:
    """Per-call facts about the key axis [retrieved R; memory M; current T], shared by all layers."""

    n_retrieved: int
    # [B|1, T, K'] long: each (query, key) pair's entry in a layer's bias table (RelativeAttention._bias_table):
    # query type x (key type, key group: plain / connective / retrieved), or the last entry (-inf) if hidden
    pair: torch.Tensor
    visible: torch.Tensor  # [B|1, 1, T, K'] bool
    k_connective: torch.Tensor | None  # [B, K'] float
    is_retrieved: torch.Tensor  # [K'] float, 1 on retrieved columns
    is_memory: torch.Tensor  # [K'] float, 1 on memory columns
    diagnostics: list | None  # rows are appended here when diagnostics are on


def type_index(types: torch.Tensor, n: int) -> torch.Tensor:
    """Long types (-1 or out of range = unknown) -> 0..n, n standing for unknown (no tag bias)."""
    types = types.long()
    return torch.where((types >= 0) & (types < n), types, n)
