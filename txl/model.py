"""Transformer-XL (Dai et al. 2019) for long documents, batch-first, in one file.

score(i, j) = (q_i + u)·k_j + (q_i + v)·W_kR R_{i-j}, scaled by 1/sqrt(d_head), over keys
[retrieved; memory; current segment]. On top of the paper, three additive logit biases, all zero at
initialisation so an untrained model is exactly the plain Transformer-XL:

- block-type tags: every token and memory slot carries the block type it came from
  (pipeline.records.BLOCK_TYPE_IDS, -1 = unknown); each layer learns a bias per head for each
  (query type, key type) pair — read it with `model.tag_bias_table()`;
- connective boost: a per-head bias on keys that the segmenter marked as discourse connectives,
  learned (zero-init) or a fixed beta for ablations;
- retrieved memory: extra per-layer slots (states of distant segments fetched by retrieval) that every
  query sees, placed at one "far" relative distance (`retrieved_bucket`, default clamp_len), with a
  learned per-head bias.

forward keywords (all optional; B lanes, T tokens, M memory slots, R retrieved slots):
  mems            list of n_layer + 1 [B, M, d_model] from the previous call (`out.mems`); None = empty;
                  n_layer entries (HF's layout, see txl.convert) are accepted and returned as n_layer
  targets         [B, T] next-token ids aligned with input_ids -> out.nll [B, T]
  block_types     [B, T] long; mem_types [B, M] long (carried for you in out.mem_types)
  connective_mask [B, T] bool; mem_connective [B, M] bool (carried in out.mem_connective)
  mem_mask        [B, M] bool, True = visible (carried in out.mem_mask)
  mem_keep        [B] bool: False hides all memory of that lane (a new document starts there) — the
                  slots are masked, never zero-filled, so the lane equals a fresh start
  lengths         [B] long: real tokens per lane, the rest of each row is right padding (ragged lanes,
                  e.g. the segments of different documents in one batch). Causal attention keeps padding
                  out of the real queries; the carried memory of each lane ends at its last real token
                  (right-aligned, masked slots on the left), so every lane equals its own unbatched run
  seg_starts      [B, T] long: several consecutive segments of a lane packed into one call; entry t is the
                  position (in this call) where token t's segment begins. Each token then sees the mem_len
                  tokens before its segment and its segment so far, exactly what it would see with one
                  call per segment, so a packed call equals those calls (far fewer, larger steps)
  retrieved       list of n_layer + 1 (or n_layer) [B, R, d_model]: entry l is the input of layer l,
                  i.e. the same layout as `mems`, so stored `out.mems` of another segment can be passed
  retrieved_types [B, R] long; retrieved_mask [B, R] bool (False = padding slot)
  mem_kv          the memory's attention keys/values as returned by the previous call under
                  torch.no_grad() (carried in out.mem_kv): evaluation then projects only the new
                  tokens. Valid only with that call's mems and unchanged weights; ignored with autograd on
  diagnostics     True -> out.diagnostics, a per (layer, head) table (txl.diagnostics)

`out.carry()` gives the memory keywords for the next segment: `model(x2, **out.carry())`.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.records import BlockType
from txl.adaptive import AdaptiveEmbedding, AdaptiveLogSoftmax


@dataclass
class TransformerXLConfig:
    vocab_size: int = 32000
    d_model: int = 256
    n_layer: int = 6
    n_head: int = 4
    d_head: int = 64
    d_inner: int = 1024
    d_embed: int | None = None  # None = d_model
    mem_len: int = 384
    clamp_len: int = 1000  # <= 0: no clamping
    same_length: bool = False
    pre_lnorm: bool = False
    untie_r: bool = False  # False: u, v shared by all layers (the paper); True: per layer
    dropout: float = 0.1
    dropatt: float = 0.0
    drop_mem: float = 0.0  # recurrence dropout: probability of hiding a memory slot in training
    cutoffs: list[int] = field(default_factory=lambda: [4000, 16000])
    div_val: int = 1
    tie_weights: bool = True
    tie_projs: list[bool] | None = None  # None = [False] + [True] * len(cutoffs), the reference default
    layer_norm_eps: float = 1e-5
    init_std: float = 0.02
    proj_init_std: float = 0.01
    n_block_types: int = len(BlockType)
    tag_bias: bool = True
    connective_boost: Literal["off", "learned", "fixed"] = "learned"
    connective_beta: float = 1.0  # the boost when connective_boost == "fixed"
    retrieved_bucket: int | None = None  # relative distance of retrieved slots; None = clamp_len
    use_sdpa: bool = True

    def __post_init__(self) -> None:
        if self.d_embed is None:
            self.d_embed = self.d_model
        if self.tie_projs is None:
            self.tie_projs = [False] + [True] * len(self.cutoffs)
        if self.connective_boost not in ("off", "learned", "fixed"):
            raise ValueError(f"connective_boost must be off, learned or fixed, not {self.connective_boost!r}")
        if list(self.cutoffs) != sorted(set(self.cutoffs)) or any(not 0 < c < self.vocab_size for c in self.cutoffs):
            raise ValueError(f"cutoffs must increase strictly inside (0, vocab_size={self.vocab_size}): {self.cutoffs}")
        if len(self.tie_projs) != len(self.cutoffs) + 1:
            raise ValueError(f"tie_projs needs one entry per cluster ({len(self.cutoffs) + 1}): {self.tie_projs}")
        if not all(0.0 <= p < 1.0 for p in (self.dropout, self.dropatt)) or not 0.0 <= self.drop_mem <= 1.0:
            raise ValueError("dropout and dropatt must lie in [0, 1), drop_mem in [0, 1]")


@dataclass
class TXLOutput:
    hidden: torch.Tensor  # [B, T, d_model], last layer (after output dropout)
    mems: list[torch.Tensor] | None  # n_layer + 1 of [B, M, d_model], detached
    mem_types: torch.Tensor | None = None
    mem_connective: torch.Tensor | None = None
    mem_mask: torch.Tensor | None = None
    mem_kv: list[torch.Tensor] | None = None  # n_layer of [B, M, 2 * n_head * d_head], under no_grad only
    layer_inputs: list[torch.Tensor] | None = None  # n_layer of [B, T, d_model], each layer's input
    nll: torch.Tensor | None = None  # [B, T] when targets were given
    diagnostics: object | None = None  # pandas.DataFrame when diagnostics=True

    def carry(self) -> dict:
        """Keywords that continue this lane state in the next call."""
        return {
            "mems": self.mems,
            "mem_types": self.mem_types,
            "mem_connective": self.mem_connective,
            "mem_mask": self.mem_mask,
            "mem_kv": self.mem_kv,
        }


def sinusoid(pos: torch.Tensor, d: int) -> torch.Tensor:
    """[K] float distances -> [K, d] embeddings, sin half then cos half (the reference layout)."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0.0, d, 2.0, device=pos.device) / d))
    angles = pos.float()[:, None] * inv_freq[None, :]
    return torch.cat([angles.sin(), angles.cos()], -1)


def rel_shift(padded: torch.Tensor) -> torch.Tensor:
    """The pad-and-reshape trick of the reference: [.., T, K+1] position scores whose column 0 is zero
    padding and column c+1 holds distance K-1-c, read as [.., K+1, T] minus its first row, read back as
    [.., T, K] -> indexed by (query i, key j) with distance i + (K - T) - j. A strided view, no copy;
    entries with j > i + (K - T) are garbage and must be masked."""
    *lead, t, k1 = padded.shape
    padded = padded.contiguous()
    return padded.as_strided((*lead, t, k1 - 1), (*padded.stride()[:-2], k1 - 1, 1), padded.storage_offset() + t)


def position_scores(qv: torch.Tensor, rk: torch.Tensor, n_r: int) -> torch.Tensor:
    """(q + v)·W_kR R for every (query, key): qv [B, H, T, dh], rk [H, dh, 1 + K (+1 far bucket if n_r)]
    whose column 0 is zero (W_kR of a zero row, so the scores come out already padded)
    -> [B, H, T, n_r + K]. Only [T, K] scores are formed, never a [T, K, d] position tensor."""
    scores = rel_shift(qv @ (rk[..., :-1] if n_r else rk))
    if n_r:
        b, h, t, _ = qv.shape
        scores = torch.cat([(qv @ rk[..., -1:]).expand(b, h, t, n_r), scores], -1)
    return scores


@dataclass
class _Keys:
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


class RelativeAttention(nn.Module):
    def __init__(self, cfg: TransformerXLConfig):
        super().__init__()
        self.cfg = cfg
        h, dh = cfg.n_head, cfg.d_head
        self.qkv = nn.Linear(cfg.d_model, 3 * h * dh, bias=False)
        self.r_proj = nn.Linear(cfg.d_model, h * dh, bias=False)  # W_kR
        self.out = nn.Linear(h * dh, cfg.d_model, bias=False)
        self.ln = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)
        self.scale = 1.0 / math.sqrt(dh)
        if cfg.untie_r:
            self.u = nn.Parameter(torch.zeros(h, dh))
            self.v = nn.Parameter(torch.zeros(h, dh))
        if cfg.tag_bias:
            # tag_bias[h, query type, key type]; zero-init so an untrained bias changes nothing
            self.tag_bias = nn.Parameter(torch.zeros(h, cfg.n_block_types, cfg.n_block_types))
        if cfg.connective_boost == "learned":
            self.boost = nn.Parameter(torch.zeros(h))
        self.retrieved_bias = nn.Parameter(torch.zeros(h))

    def forward(
        self,
        x: torch.Tensor,
        rk: torch.Tensor,
        mem: torch.Tensor | None,
        retrieved: torch.Tensor | None,
        keys: _Keys,
        u: torch.Tensor,
        v: torch.Tensor,
        layer: int,
        mem_kv: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """-> (output, keys+values of [memory; current] [B, M + T, 2 * H * dh]) for the next kv cache."""
        cfg = self.cfg
        b, t, _ = x.shape
        h, dh = cfg.n_head, cfg.d_head
        n_r = keys.n_retrieved
        w_q, w_kv = self.qkv.weight[: h * dh], self.qkv.weight[h * dh :]
        # memory slots need no new projection when their keys/values come cached from the last call
        cached = mem_kv is not None and mem is not None and mem_kv.size(1) == mem.size(1)
        ctx = [s for s in (retrieved, None if cached else mem) if s is not None]
        cat = torch.cat([*ctx, x], 1) if ctx else x
        inp = self.ln(cat) if cfg.pre_lnorm else cat
        kv = F.linear(inp, w_kv)
        if cached:
            kv = torch.cat([kv[:, :n_r], mem_kv.to(kv.dtype), kv[:, n_r:]], 1)
        # queries only for the current segment; keys and values over [retrieved; memory; current]
        q = F.linear(inp[:, -t:], w_q).view(b, t, h, dh).transpose(1, 2)
        k, val = kv.view(b, -1, 2, h, dh).permute(2, 0, 3, 1, 4)
        pos = position_scores(q + v[:, None], rk, n_r)
        # tag bias, connective boost, retrieved bias and the mask in one lookup: [H, B|1, T, K'] -> [B|1, H, T, K']
        # (head-major, so that the add below reads both operands along K; 2x faster than a lookup per pair)
        static = self._bias_table(pos.dtype).index_select(1, keys.pair.view(-1)).view(h, *keys.pair.shape)
        static = static.transpose(0, 1)
        bias = torch.add(static, pos, alpha=self.scale)

        if keys.diagnostics is not None or not cfg.use_sdpa:
            scores = (q + u[:, None]) @ k.transpose(-1, -2) * self.scale + bias
            probs = torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), -1).to(val.dtype)
            if keys.diagnostics is not None:
                from txl.diagnostics import summarize_layer

                keys.diagnostics.extend(summarize_layer(layer, q, k, u, v, rk, probs, keys, self.scale))
            probs = F.dropout(probs, cfg.dropatt, self.training)
            vec = probs @ val
        else:
            vec = F.scaled_dot_product_attention(
                q + u[:, None], k, val, attn_mask=bias.to(q.dtype), dropout_p=cfg.dropatt if self.training else 0.0
            )
        out = self.drop(self.out(vec.transpose(1, 2).reshape(b, t, h * dh)))
        return (x + out if cfg.pre_lnorm else self.ln(x + out)), kv[:, n_r:]

    def _bias_table(self, dtype: torch.dtype) -> torch.Tensor:
        """[H, (n + 1) * 3 * (n + 1) + 1]: the additive logit of every (query type, key group, key type) for
        the n block types and unknown (no tag bias), the key groups plain, connective (+ boost) and
        retrieved (+ retrieved bias), and last -inf for hidden keys; indexed by _Keys.pair."""
        cfg = self.cfg
        h, n = cfg.n_head, cfg.n_block_types
        ref = self.retrieved_bias
        tags = F.pad(self.tag_bias, (0, 1, 0, 1)) if cfg.tag_bias else ref.new_zeros(h, n + 1, n + 1)
        if cfg.connective_boost == "learned":
            boost = self.boost
        else:
            boost = ref.new_full((h,), cfg.connective_beta if cfg.connective_boost == "fixed" else 0.0)
        groups = torch.stack([tags, tags + boost[:, None, None], tags + ref[:, None, None]], 2)  # [H, n+1, 3, n+1]
        table = torch.cat([groups.reshape(h, -1), ref.new_full((h, 1), float("-inf"))], 1)
        return table.to(dtype)


class FeedForward(nn.Module):
    def __init__(self, cfg: TransformerXLConfig):
        super().__init__()
        self.pre_lnorm = cfg.pre_lnorm
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_inner)
        self.fc2 = nn.Linear(cfg.d_inner, cfg.d_model)
        self.ln = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.drop(self.fc2(self.drop(F.relu(self.fc1(self.ln(x) if self.pre_lnorm else x)))))
        return x + y if self.pre_lnorm else self.ln(x + y)


class Block(nn.Module):
    def __init__(self, cfg: TransformerXLConfig):
        super().__init__()
        self.attn = RelativeAttention(cfg)
        self.ff = FeedForward(cfg)

    def forward(self, x, rk, mem, retrieved, keys: _Keys, u, v, layer: int, mem_kv=None):
        x, kv = self.attn(x, rk, mem, retrieved, keys, u, v, layer, mem_kv)
        return self.ff(x), kv


def _type_index(types: torch.Tensor, n: int) -> torch.Tensor:
    """Long types (-1 or out of range = unknown) -> 0..n, n standing for unknown (no tag bias)."""
    types = types.long()
    return torch.where((types >= 0) & (types < n), types, n)


class TransformerXLLM(nn.Module):
    def __init__(self, cfg: TransformerXLConfig):
        super().__init__()
        self.cfg = cfg
        self.emb = AdaptiveEmbedding(cfg.vocab_size, cfg.d_embed, cfg.d_model, cfg.cutoffs, cfg.div_val)
        self.drop = nn.Dropout(cfg.dropout)
        if not cfg.untie_r:
            self.u = nn.Parameter(torch.zeros(cfg.n_head, cfg.d_head))
            self.v = nn.Parameter(torch.zeros(cfg.n_head, cfg.d_head))
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.crit = AdaptiveLogSoftmax(cfg.vocab_size, cfg.d_embed, cfg.d_model, cfg.cutoffs, cfg.div_val)
        self.apply(self._init_weights)
        self._tie()
        self._rk_cache: tuple | None = None  # see _position_keys

    def _init_weights(self, m: nn.Module) -> None:
        # the reference initialisation: N(0, init_std) weights, N(0, proj_init_std) projections,
        # LayerNorm weight N(1, init_std); the added biases stay zero so training starts from plain TXL
        std, pstd = self.cfg.init_std, self.cfg.proj_init_std
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, 0.0, std)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, 1.0, std)
            nn.init.zeros_(m.bias)
        elif isinstance(m, AdaptiveEmbedding | AdaptiveLogSoftmax):
            for p in m.projs:
                nn.init.normal_(p, 0.0, pstd)
            if isinstance(m, AdaptiveLogSoftmax) and m.n_clusters:
                nn.init.normal_(m.cluster_weight, 0.0, std)
                nn.init.zeros_(m.cluster_bias)
        elif isinstance(m, TransformerXLLM | RelativeAttention) and hasattr(m, "u"):
            nn.init.normal_(m.u, 0.0, std)
            nn.init.normal_(m.v, 0.0, std)

    def _tie(self) -> None:
        cfg = self.cfg
        if cfg.tie_weights:
            for out_layer, emb_layer in zip(self.crit.layers, self.emb.layers, strict=True):
                out_layer.weight = emb_layer.weight
        for i, tie in enumerate(cfg.tie_projs):
            if tie and cfg.div_val == 1 and cfg.d_model != cfg.d_embed:
                self.crit.projs[i] = self.emb.projs[0]
            elif tie and cfg.div_val != 1:
                self.crit.projs[i] = self.emb.projs[i]

    def tag_bias_table(self) -> torch.Tensor:
        """[n_layer, n_head, query type, key type] learned tag biases (ids: pipeline.records.BLOCK_TYPE_IDS)."""
        if not self.cfg.tag_bias:
            raise ValueError("this model was built with tag_bias=False")
        return torch.stack([blk.attn.tag_bias.detach() for blk in self.layers])

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """[B, T, d_model] -> [B, T, vocab] log-probabilities of the adaptive softmax."""
        return self.crit.log_probs(hidden)

    def forward(
        self,
        input_ids: torch.Tensor,
        mems: list[torch.Tensor] | None = None,
        *,
        targets: torch.Tensor | None = None,
        block_types: torch.Tensor | None = None,
        mem_types: torch.Tensor | None = None,
        connective_mask: torch.Tensor | None = None,
        mem_connective: torch.Tensor | None = None,
        mem_mask: torch.Tensor | None = None,
        mem_keep: torch.Tensor | None = None,
        retrieved: list[torch.Tensor] | None = None,
        retrieved_types: torch.Tensor | None = None,
        retrieved_mask: torch.Tensor | None = None,
        mem_kv: list[torch.Tensor] | None = None,
        lengths: torch.Tensor | None = None,
        seg_starts: torch.Tensor | None = None,
        diagnostics: bool = False,
    ) -> TXLOutput:
        cfg = self.cfg
        b, t = input_ids.shape
        dev = input_ids.device
        m = mems[0].size(1) if mems else 0
        n_r = retrieved[0].size(1) if retrieved else 0
        if mems and len(mems) not in (cfg.n_layer, cfg.n_layer + 1):
            raise ValueError(f"mems must hold n_layer + 1 = {cfg.n_layer + 1} tensors, got {len(mems)}")
        if n_r and len(retrieved) < cfg.n_layer:
            raise ValueError(f"retrieved must hold n_layer (+1) = {cfg.n_layer} tensors, got {len(retrieved)}")

        word = self.emb(input_ids)
        # which memory slots stay visible (persisted into out.mem_mask) ...
        mem_vis = None
        if m and mem_mask is not None:
            mem_vis = mem_mask.bool()
        if m and mem_keep is not None:
            keep = mem_keep.bool()[:, None].expand(b, m)
            mem_vis = keep if mem_vis is None else mem_vis & keep
        # ... and which this call sees (recurrence dropout hides slots for one step only)
        attn_vis = mem_vis
        if m and self.training and cfg.drop_mem > 0:
            kept = torch.rand(b, m, device=dev) >= cfg.drop_mem
            attn_vis = kept if attn_vis is None else attn_vis & kept

        keys = self._keys(b, t, m, n_r, attn_vis, retrieved_mask, block_types, mem_types, retrieved_types,
                          connective_mask, mem_connective, seg_starts, dev, diagnostics)
        rks = self._position_keys(m + t, n_r, word.dtype, dev)

        x = self.drop(word)
        # without autograd (evaluation, encoding) the memory's keys/values are carried, not re-projected
        grad = torch.is_grad_enabled()
        hids, kvs = [], []
        for i, blk in enumerate(self.layers):
            hids.append(x)
            u, v = (blk.attn.u, blk.attn.v) if cfg.untie_r else (self.u, self.v)
            cached = mem_kv[i] if (mem_kv and m and not grad) else None
            x, kv = blk(x, rks[i], mems[i] if m else None, retrieved[i] if n_r else None, keys, u, v, i, cached)
            kvs.append(kv)
        hids.append(x)
        hidden = self.drop(x)

        out = TXLOutput(hidden=hidden, mems=None, layer_inputs=hids[:-1])
        with torch.no_grad():
            kept = hids[: len(mems)] if mems else hids  # n_layer entries in, n_layer out (HF's layout)
            full = [(torch.cat([mems[i], h], 1) if m else h).detach() for i, h in enumerate(kept)]
            if lengths is not None and mem_vis is None:
                mem_vis = torch.ones(b, m, dtype=torch.bool, device=dev)
            vis = torch.cat([mem_vis, mem_vis.new_ones(b, t)], 1) if mem_vis is not None else None
            types = self._carry(mem_types, block_types, b, m, t, -1, dev)
            conn = self._carry(mem_connective, connective_mask, b, m, t, False, dev)
            take, valid = self._window(b, m, t, lengths, dev)
            out.mems = [take(f) for f in full]
            out.mem_mask = take(vis) if valid is None else take(vis) & valid
            out.mem_types, out.mem_connective = take(types), take(conn)
            if not grad:
                out.mem_kv = [take(kv) for kv in kvs]
        if targets is not None:
            out.nll = self.crit.nll(hidden, targets)
        if diagnostics:
            from txl.diagnostics import to_table

            out.diagnostics = to_table(keys.diagnostics)
        return out

    def _position_keys(self, k: int, n_r: int, dtype: torch.dtype, dev: torch.device) -> list[torch.Tensor]:
        """Per layer W_kR R as [H, dh, 1 + K (+1)]: a zero column (the rel shift's padding; W_kR has no
        bias), distances K-1..0, and the far bucket of retrieved slots if any. Every segment of an
        evaluation has the same distances, so without autograd the last result is reused while the
        distances, the precision and the weights (their version counters) stay the same."""
        cfg = self.cfg
        far = cfg.retrieved_bucket or (cfg.clamp_len if cfg.clamp_len > 0 else k)
        reuse = not (self.training or torch.is_grad_enabled())
        if reuse:
            weights = [blk.attn.r_proj.weight for blk in self.layers]
            key = (k, n_r > 0, far, cfg.clamp_len, dtype, dev, torch.is_autocast_enabled(dev.type),
                   tuple((w._version, w.data_ptr()) for w in weights))
            if self._rk_cache is not None and self._rk_cache[0] == key:
                return self._rk_cache[1]
        pos = torch.arange(k - 1, -1, -1.0, device=dev)
        if cfg.clamp_len > 0:
            pos = pos.clamp(max=cfg.clamp_len)
        if n_r:
            pos = torch.cat([pos, pos.new_tensor([float(far)])])
        r = self.drop(F.pad(sinusoid(pos, cfg.d_model), (0, 0, 1, 0)).to(dtype))
        h, dh = cfg.n_head, cfg.d_head
        rks = [blk.attn.r_proj(r).view(-1, h, dh).permute(1, 2, 0) for blk in self.layers]
        if reuse:
            self._rk_cache = (key, rks)
        return rks

    def _window(self, b: int, m: int, t: int, lengths: torch.Tensor | None, dev: torch.device):
        """(take, valid): `take` maps [B, M + T, ...] to the next memory [B, W, ...] — the newest W =
        min(mem_len, M + T) slots, or with ragged lanes the W slots that end at each lane's last real
        token; `valid` [B, W] is False where such a window reaches left of slot 0 (None without lengths)."""
        w = min(self.cfg.mem_len, m + t)
        if lengths is None:
            return (lambda x: None if x is None else x[:, m + t - w :]), None
        pos = (m + lengths.to(dev).long())[:, None] - w + torch.arange(w, device=dev)  # [B, W]
        valid = pos >= 0
        rows = (pos.clamp(min=0) + torch.arange(b, device=dev)[:, None] * (m + t)).view(-1)

        def take(x: torch.Tensor | None) -> torch.Tensor | None:
            # whole rows of the flattened [B * (M + T), ...]: row copies, not a per-element gather
            if x is None:
                return None
            return x.reshape(b * (m + t), *x.shape[2:]).index_select(0, rows).view(b, w, *x.shape[2:])

        return take, valid

    @staticmethod
    def _carry(old, new, b, m, t, fill, dev) -> torch.Tensor | None:
        """Per-slot labels (types, connective flags) of the next memory; None when nothing is known."""
        if old is None and new is None:
            return None
        dtype = torch.long if fill == -1 else torch.bool
        old = old if old is not None else torch.full((b, m), fill, dtype=dtype, device=dev)
        new = new if new is not None else torch.full((b, t), fill, dtype=dtype, device=dev)
        return torch.cat([old[:, :m].to(dtype), new.to(dtype)], 1)

    def _keys(self, b, t, m, n_r, mem_vis, retrieved_mask, block_types, mem_types, retrieved_types,
              connective_mask, mem_connective, seg_starts, dev, diagnostics) -> _Keys:
        cfg = self.cfg
        dtype = self.emb.layers[0].weight.dtype  # fp32, or fp64 for a .double() model
        k = m + t
        i = torch.arange(t, device=dev)[:, None]
        j = torch.arange(k, device=dev)[None, :]
        vis = j <= i + m
        if cfg.same_length:
            # the reference: each query sees the same number of keys (mem_len once memory is full)
            over = k - cfg.mem_len
            vis = vis & (j > i - (t - over if over > 0 else t))
        vis = vis[None, None]
        if seg_starts is not None:
            # key column j holds call position j - m: visible from mem_len before the query's segment on
            floor = seg_starts.to(dev).long() + (m - cfg.mem_len)  # [B, T]
            vis = vis & (j[None] >= floor[:, :, None])[:, None]
        if mem_vis is not None:
            vis = vis & torch.cat([mem_vis, mem_vis.new_ones(b, t)], 1)[:, None, None, :]
        if n_r:
            rv = retrieved_mask.bool() if retrieved_mask is not None else torch.ones(1, n_r, dtype=torch.bool, device=dev)
            bb = max(vis.size(0), rv.size(0))
            vis = torch.cat([rv[:, None, None, :].expand(bb, 1, t, n_r), vis.expand(bb, 1, t, k)], -1)
        n = cfg.n_block_types
        k_conn = None
        if cfg.connective_boost != "off" and (connective_mask is not None or mem_connective is not None):
            parts = [torch.zeros(b, n_r, device=dev),  # retrieved slots carry no connective flag
                     mem_connective if mem_connective is not None else torch.zeros(b, m, device=dev),
                     connective_mask if connective_mask is not None else torch.zeros(b, t, device=dev)]
            k_conn = torch.cat([p.to(dtype) for p in parts], 1)
        # bias table coordinates (RelativeAttention._bias_table); type n = unknown, which has no tag bias
        q_type = torch.full((b, t), n, dtype=torch.long, device=dev)
        k_type = torch.full((b, n_r + k), n, dtype=torch.long, device=dev)
        if cfg.tag_bias and block_types is not None:
            parts = [retrieved_types if retrieved_types is not None else torch.full((b, n_r), -1, device=dev),
                     mem_types if mem_types is not None else torch.full((b, m), -1, device=dev),
                     block_types]
            q_type = _type_index(block_types, n)
            k_type = _type_index(torch.cat([p.long().expand(b, -1) for p in parts], 1), n)
        group = torch.zeros(b, n_r + k, dtype=torch.long, device=dev)
        if k_conn is not None:
            group = (k_conn > 0).long()
        group[:, :n_r] = 2
        k_col = group * (n + 1) + k_type  # [B, K']
        pair = q_type[:, :, None] * (3 * (n + 1)) + k_col[:, None, :]
        pair = pair.masked_fill(~vis[:, 0], 3 * (n + 1) * (n + 1))
        cols = torch.arange(n_r + k, device=dev)
        return _Keys(
            n_retrieved=n_r,
            pair=pair,
            visible=vis,
            k_connective=k_conn,
            is_retrieved=(cols < n_r).to(dtype),
            is_memory=((cols >= n_r) & (cols < n_r + m)).to(dtype),
            diagnostics=[] if diagnostics else None,
        )


@functools.cache
def cpu_has_bf16_matmul() -> bool:
    """Whether this CPU multiplies bf16 matrices in AMX tiles (Intel Sapphire Rapids and later): there a
    bf16 linear runs ~4x faster than fp32 (measured: 825 vs 209 GFLOP/s for [512, 256] x [256, 1024] on
    two cores); AVX-512 alone gives no such gain."""
    try:
        return "amx_bf16" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


def autocast(device: torch.device | str, dtype: str = "auto") -> contextlib.AbstractContextManager:
    """The precision context of ModelConfig.dtype: "auto" = bf16 autocast on CUDA and on CPUs with bf16
    matrix units, fp32 elsewhere; "bfloat16" = bf16 autocast on any device, "float32" = none."""
    device = torch.device(device)
    fast = device.type == "cuda" or (device.type == "cpu" and cpu_has_bf16_matmul())
    if dtype == "bfloat16" or (dtype == "auto" and fast):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()
