"""Relative positions and the key axis of Transformer-XL attention, shared by the model and its
diagnostics (txl.diagnostics reads the same facts without importing the model).

The key axis of every layer is [retrieved R; memory M; current segment T]: K' = R + M + T columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from txl.model import TransformerXLConfig


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


def _visibility(
    cfg: TransformerXLConfig,
    b: int,
    retrieved: Slots,
    memory: Slots,
    t: int,
    seg_starts: torch.Tensor | None,
    dev: torch.device,
) -> torch.Tensor:
    """[B|1, 1, T, K'] bool: which keys of [retrieved R; memory M; current T] each query sees."""
    n_r, m = retrieved.n, memory.n
    k = m + t
    i = torch.arange(t, device=dev)[:, None]  # [T, 1]
    j = torch.arange(k, device=dev)[None, :]  # [1, K]
    vis = j <= i + m  # [T, K]
    if cfg.same_length:
        # the reference: each query sees the same number of keys (mem_len once memory is full)
        over = k - cfg.mem_len
        vis = vis & (j > i - (t - over if over > 0 else t))
    vis = vis[None, None]  # [1, 1, T, K]
    if seg_starts is not None:
        # key column j holds call position j - m: visible from mem_len before the query's segment on
        floor = seg_starts.to(dev).long() + (m - cfg.mem_len)  # [B, T]
        vis = vis & (j[None] >= floor[:, :, None])[:, None]  # [B, 1, T, K]
    if memory.visible is not None:
        vis = vis & torch.cat([memory.visible, memory.visible.new_ones(b, t)], 1)[:, None, None, :]
    if n_r:
        rv = (
            retrieved.visible.bool()
            if retrieved.visible is not None
            else torch.ones(1, n_r, dtype=torch.bool, device=dev)
        )
        bb = max(vis.size(0), rv.size(0))
        vis = torch.cat(
            [rv[:, None, None, :].expand(bb, 1, t, n_r), vis.expand(bb, 1, t, k)], -1
        )  # [B|1, 1, T, K']
    return vis


def key_axis(
    cfg: TransformerXLConfig,
    b: int,
    retrieved: Slots,
    memory: Slots,
    current: Slots,
    seg_starts: torch.Tensor | None,
    diagnostics: bool,
    weight: torch.Tensor,
) -> KeyAxis:
    """The key axis [retrieved R; memory M; current T] of this call: what each query sees and where
    each (query, key) pair reads its bias table. `weight` (the model's embedding) gives dtype and device."""
    dtype = weight.dtype
    n_r, m, t = retrieved.n, memory.n, current.n
    dev = weight.device
    k = m + t
    vis = _visibility(cfg, b, retrieved, memory, t, seg_starts, dev)
    n = cfg.n_block_types
    k_conn = None
    if cfg.connective_boost != "off" and (current.connective is not None or memory.connective is not None):
        parts = [
            torch.zeros(b, n_r, device=dev),  # retrieved slots carry no connective flag
            memory.connective if memory.connective is not None else torch.zeros(b, m, device=dev),
            current.connective if current.connective is not None else torch.zeros(b, t, device=dev),
        ]
        k_conn = torch.cat([p.to(dtype) for p in parts], 1)  # [B, K']
    # bias table coordinates (RelativeAttention._bias_table); type n = unknown, which has no tag bias
    q_type = torch.full((b, t), n, dtype=torch.long, device=dev)
    k_type = torch.full((b, n_r + k), n, dtype=torch.long, device=dev)
    if cfg.tag_bias and current.types is not None:
        parts = [
            s.types if s.types is not None else torch.full((b, s.n), -1, device=dev)
            for s in (retrieved, memory)
        ]
        q_type = type_index(current.types, n)
        k_type = type_index(torch.cat([p.long().expand(b, -1) for p in (*parts, current.types)], 1), n)
    group = torch.zeros(b, n_r + k, dtype=torch.long, device=dev)
    if k_conn is not None:
        group = (k_conn > 0).long()
    group[:, :n_r] = 2
    k_col = group * (n + 1) + k_type  # [B, K']
    pair = q_type[:, :, None] * (3 * (n + 1)) + k_col[:, None, :]  # [B, T, K']
    pair = pair.masked_fill(~vis[:, 0], 3 * (n + 1) * (n + 1))
    cols = torch.arange(n_r + k, device=dev)
    return KeyAxis(
        n_retrieved=n_r,
        pair=pair,
        visible=vis,
        k_connective=k_conn,
        is_retrieved=(cols < n_r).to(dtype),
        is_memory=((cols >= n_r) & (cols < n_r + m)).to(dtype),
        diagnostics=[] if diagnostics else None,
    )
