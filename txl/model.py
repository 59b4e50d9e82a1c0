"""Transformer-XL (Dai et al. 2019) for long documents, batch-first (the key axis: txl.relative; the
memory: txl.memory).

score(i, j) = (q_i + u)·k_j + (q_i + v)·W_kR R_{i-j}, scaled by 1/sqrt(d_head), over keys
[retrieved; memory; current segment]. On top of the paper, three additive logit biases, all zero at
initialisation so an untrained model is exactly the plain Transformer-XL:

- block-type tags: every token and memory slot carries the block type it came from
  (pipeline.records.BLOCK_TYPE_IDS, -1 = unknown); each layer learns a bias per head for each
  (query type, key type) pair — read it with `model.tag_bias_table()`;
- connective boost: a per-head bias on keys that the segmenter marked as discourse connectives,
  learned (zero-init) or a fixed beta for ablations;
- retrieved memory: extra slots (states of distant segments fetched by retrieval) that the queries
  of every layer, or of the layers they are stored for, see at one "far" relative distance
  (`retrieved_bucket`, default clamp_len), with a learned per-head bias.

Off by default, learned vectors for block types and connective clauses added to the input: txl.features.

forward(input_ids [B, T], memory=None, retrieved=None, *, targets, block_types, connective_mask, scope_mask,
packing, diagnostics) — B lanes, T tokens, M memory slots, R retrieved slots; all but input_ids optional:
  memory          txl.memory.Memory from the previous call (`out.memory`); None = empty. Its mask hides
                  slots (`memory.reset(new_doc)` hides a lane's whole memory where a new document starts —
                  masked, never zero-filled, so the lane equals a fresh start); its kv cache (made under
                  torch.no_grad()) spares evaluation re-projecting the memory: valid only with that call's
                  states and unchanged weights, ignored with autograd on. n_layer states (HF's layout, see
                  txl.convert) are accepted and returned as n_layer
  retrieved       txl.retrieved.Retrieved: slots in the layout of memory.states (stored `out.memory`
                  of another segment can be passed) or for some layers only, with types and validity
  targets         [B, T] next-token ids aligned with input_ids -> out.nll [B, T]
  block_types     [B, T] long (carried into out.memory.types)
  connective_mask [B, T] bool (carried into out.memory.connective)
  scope_mask      [B, T] bool: inside a connective's clause (read only with cfg.scope_embedding; the
                  tag embedding reads block_types), see txl.features
  packing         txl.memory.Packing: `lengths` [B] (ragged lanes: right padding kept out of the real
                  queries, the carried memory of each lane ends at its last real token, so every lane equals
                  its own unbatched run) and `seg_starts` [B, T] (consecutive segments of a lane in one
                  call, equal to one call per segment)
  diagnostics     True -> out.diagnostics, a per (layer, head) table (txl.diagnostics)

`out.memory` continues the lanes in the next call: `model(x2, out.memory)`.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from pipeline.records import BlockType
from txl.adaptive import AdaptiveEmbedding, AdaptiveLogSoftmax
from txl.diagnostics import summarize_layer, to_table
from txl.features import InputFeatures, logit_table
from txl.memory import Memory, Packing, cached_kv
from txl.relative import KeyAxis, Slots, key_axis, position_scores, sinusoid
from txl.retrieved import Retrieved


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
    tag_embedding: bool = False  # a learned vector per block type added to the layer-0 input (txl.features)
    scope_embedding: bool = False  # a learned vector added to tokens inside a connective's clause
    retrieved_bucket: int | None = None  # relative distance of retrieved slots; None = clamp_len
    use_sdpa: bool = True

    def __post_init__(self) -> None:
        if self.d_embed is None:
            self.d_embed = self.d_model
        if self.tie_projs is None:
            self.tie_projs = [False] + [True] * len(self.cutoffs)
        if self.connective_boost not in ("off", "learned", "fixed"):
            raise ValueError(f"connective_boost must be off, learned or fixed, not {self.connective_boost!r}")
        if list(self.cutoffs) != sorted(set(self.cutoffs)) or any(
            not 0 < c < self.vocab_size for c in self.cutoffs
        ):
            raise ValueError(
                f"cutoffs must increase strictly inside (0, vocab_size={self.vocab_size}): {self.cutoffs}"
            )
        if len(self.tie_projs) != len(self.cutoffs) + 1:
            raise ValueError(
                f"tie_projs needs one entry per cluster ({len(self.cutoffs) + 1}): {self.tie_projs}"
            )
        if not all(0.0 <= p < 1.0 for p in (self.dropout, self.dropatt)) or not 0.0 <= self.drop_mem <= 1.0:
            raise ValueError("dropout and dropatt must lie in [0, 1), drop_mem in [0, 1]")


@dataclass
class TXLOutput:
    hidden: torch.Tensor | None  # [B, T, d_model], last layer (after output dropout); None: a cut call
    memory: Memory  # the next call's memory (detached)
    layer_inputs: list[torch.Tensor] | None = None  # [B, T, d_model] of each layer's input that was computed
    nll: torch.Tensor | None = None  # [B, T] when targets were given
    diagnostics: object | None = None  # pandas.DataFrame when diagnostics=True


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
        keys: KeyAxis,
        u: torch.Tensor,
        v: torch.Tensor,
        layer: int,
        mem_kv: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x [B, T, d], mem [B, M, d], retrieved [B, R, d], mem_kv [B, M, 2 * H * dh] (the cache of mem) ->
        (output [B, T, d], keys+values of [memory; current] [B, M + T, 2 * H * dh]) for the next kv cache."""
        cfg = self.cfg
        b, t, _ = x.shape
        h, dh = cfg.n_head, cfg.d_head
        # a layer that does not read the retrieved slots drops their columns from the shared key axis
        n_r = keys.n_retrieved if retrieved is not None else 0
        w_q, w_kv = self.qkv.weight[: h * dh], self.qkv.weight[h * dh :]
        # memory slots need no new projection when their keys/values come cached from the last call
        cached = mem_kv is not None and mem is not None and mem_kv.size(1) == mem.size(1)
        ctx = [s for s in (retrieved, None if cached else mem) if s is not None]
        cat = torch.cat([*ctx, x], 1) if ctx else x
        inp = self.ln(cat) if cfg.pre_lnorm else cat
        kv = F.linear(inp, w_kv)
        if cached:
            kv = cached_kv(kv, mem_kv, n_r)
        # queries only for the current segment; keys and values over [retrieved; memory; current]
        q = F.linear(inp[:, -t:], w_q).view(b, t, h, dh).transpose(1, 2)  # [B, H, T, dh]
        k, val = kv.view(b, -1, 2, h, dh).permute(2, 0, 3, 1, 4)  # each [B, H, K', dh]
        # The paper's four score terms, scaled by 1/sqrt(dh): (a) content-content q·k, (b) content-position
        # q·W_kR R, (c) global content bias u·k, (d) global position bias v·W_kR R. They are formed as two
        # products: (a) + (c) = (q + u)·k and (b) + (d) = (q + v)·W_kR R.
        content_q = q + u[:, None]  # the query of (a) + (c)
        bias = self._bias(q, v, rk, keys, keys.n_retrieved - n_r)  # everything but (a) + (c)
        if keys.diagnostics is not None or not cfg.use_sdpa:
            content_ac = content_q @ k.transpose(-1, -2)  # (a) + (c): [B, H, T, K']
            scores = content_ac * self.scale + bias
            probs = torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), -1).to(
                val.dtype
            )
            if keys.diagnostics is not None:
                keys.diagnostics.extend(summarize_layer(layer, q, k, u, v, rk, probs, keys, self.scale))
            probs = F.dropout(probs, cfg.dropatt, self.training)
            vec = probs @ val  # [B, H, T, dh]
        else:
            vec = F.scaled_dot_product_attention(
                content_q, k, val, attn_mask=bias.to(q.dtype), dropout_p=cfg.dropatt if self.training else 0.0
            )
        out = self.drop(self.out(vec.transpose(1, 2).reshape(b, t, h * dh)))
        return (x + out if cfg.pre_lnorm else self.ln(x + out)), kv[:, n_r:]

    def _bias(
        self, q: torch.Tensor, v: torch.Tensor, rk: torch.Tensor, keys: KeyAxis, cut: int
    ) -> torch.Tensor:
        """(b) + (d), scaled, plus the tag bias, connective boost, retrieved bias and the mask, over the
        keys this layer reads (the first `cut` retrieved columns of the key axis dropped): [B|1, H, T, K']."""
        position_bd = position_scores(q + v[:, None], rk, keys.n_retrieved)[..., cut:]  # [B, H, T, K']
        # the additive terms in one lookup: [H, B|1, T, K'] -> [B|1, H, T, K'] (head-major, so that the add
        # below reads both operands along K; 2x faster than a lookup per pair)
        h = self.cfg.n_head
        static = (
            self._bias_table(position_bd.dtype).index_select(1, keys.pair.view(-1)).view(h, *keys.pair.shape)
        )
        return torch.add(static.transpose(0, 1)[..., cut:], position_bd, alpha=self.scale)

    def _bias_table(self, dtype: torch.dtype) -> torch.Tensor:
        """This layer's tag bias, connective boost and retrieved bias as one table (txl.features)."""
        cfg = self.cfg
        boost = {"learned": getattr(self, "boost", None), "fixed": cfg.connective_beta, "off": 0.0}
        tags = self.tag_bias if cfg.tag_bias else None
        return logit_table(cfg.n_block_types, tags, boost[cfg.connective_boost], self.retrieved_bias, dtype)


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


class DecoderLayer(nn.Module):
    """One Transformer-XL layer: relative attention over [retrieved; memory; current], then feed-forward."""

    def __init__(self, cfg: TransformerXLConfig):
        super().__init__()
        self.attn = RelativeAttention(cfg)
        self.ff = FeedForward(cfg)

    def forward(self, x, rk, mem, retrieved, keys: KeyAxis, u, v, layer: int, mem_kv=None):
        x, kv = self.attn(x, rk, mem, retrieved, keys, u, v, layer, mem_kv)
        return self.ff(x), kv


class TransformerXLLM(nn.Module):
    def __init__(self, cfg: TransformerXLConfig):
        super().__init__()
        self.cfg = cfg
        self.emb = AdaptiveEmbedding(cfg.vocab_size, cfg.d_embed, cfg.d_model, cfg.cutoffs, cfg.div_val)
        self.features = InputFeatures(cfg.d_model, cfg.n_block_types, cfg.tag_embedding, cfg.scope_embedding)
        self.drop = nn.Dropout(cfg.dropout)
        if not cfg.untie_r:
            self.u = nn.Parameter(torch.zeros(cfg.n_head, cfg.d_head))
            self.v = nn.Parameter(torch.zeros(cfg.n_head, cfg.d_head))
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layer))
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
        memory: Memory | None = None,
        retrieved: Retrieved | None = None,
        *,
        targets: torch.Tensor | None = None,
        block_types: torch.Tensor | None = None,
        connective_mask: torch.Tensor | None = None,
        scope_mask: torch.Tensor | None = None,
        packing: Packing | None = None,
        diagnostics: bool = False,
        layers: int | None = None,
    ) -> TXLOutput:
        """`layers` < n_layer: run the first `layers` only, for callers that read nothing above (no `hidden`,
        the inputs of layers 0..`layers`, a memory that only calls cut alike take; the index stage)."""
        cfg = self.cfg
        b, t = input_ids.shape
        dev = input_ids.device
        packing = packing or Packing()
        m = memory.width if memory is not None else 0
        n_r = retrieved.width if retrieved is not None else 0
        cut = layers is not None and layers < cfg.n_layer
        self._check(memory, retrieved, layers if cut else None, targets)

        word = self.features(self.emb(input_ids), block_types, scope_mask)  # [B, T, d]
        # which memory slots this call sees: the carried mask, and recurrence dropout hides slots for one
        # step only (not carried)
        attn_vis = memory.mask.bool() if m and memory.mask is not None else None
        if m and self.training and cfg.drop_mem > 0:
            kept = torch.rand(b, m, device=dev) >= cfg.drop_mem  # [B, M]
            attn_vis = kept if attn_vis is None else attn_vis & kept
        r_slots = Slots(n_r, retrieved.types, None, retrieved.mask) if n_r else Slots(0)
        m_slots = Slots(m, memory.types, memory.connective, attn_vis) if m else Slots(0)
        weight = self.emb.layers[0].weight  # its dtype: fp32, or fp64 for a .double() model
        current = Slots(t, block_types, connective_mask)
        keys = key_axis(cfg, b, r_slots, m_slots, current, packing.seg_starts, diagnostics, weight)
        rks = self._position_keys(m + t, n_r, word.dtype, dev)

        # without autograd (evaluation, encoding) the memory's keys/values are carried, not re-projected
        grad = torch.is_grad_enabled()
        hids, kvs = self._run_layers(self.drop(word), memory, retrieved, keys, rks, grad, layers)

        with torch.no_grad():
            nxt = Memory.after(
                memory,
                hids,
                None if grad or not kvs else kvs,  # a call cut at layer 0 runs no layer
                block_types,
                connective_mask,
                cfg.mem_len,
                packing.lengths,
            )
        top = None if cut else self.drop(hids[-1])
        out = TXLOutput(hidden=top, memory=nxt, layer_inputs=hids if cut else hids[:-1])
        if targets is not None:
            out.nll = self.crit.nll(out.hidden, targets)
        if diagnostics:
            out.diagnostics = to_table(keys.diagnostics)
        return out

    def _check(self, memory: Memory | None, retrieved: Retrieved | None, cut: int | None, targets) -> None:
        if cut is not None and (targets is not None or cut < 0):
            raise ValueError(f"a call cut at layer {cut} predicts nothing and needs 0 <= layers")
        held = (cut + 1,) if cut is not None else (self.cfg.n_layer, self.cfg.n_layer + 1)  # memory states
        if memory is not None and len(memory.states) not in held:
            raise ValueError(f"memory must hold {held[-1]} states, got {len(memory.states)}")
        if retrieved is not None and retrieved.width:
            retrieved.check(self.cfg.n_layer)

    def _run_layers(
        self,
        x: torch.Tensor,
        memory: Memory | None,
        retrieved: Retrieved | None,
        keys: KeyAxis,
        rks: list[torch.Tensor],
        grad: bool,
        layers: int | None = None,
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """x [B, T, d] -> (L + 1 of [B, T, d]: each layer's input, then the last output; L keys+values
        [B, M + T, 2 * H * dh] of [memory; current]), L = n_layer or the first `layers`."""
        m = memory.width if memory is not None else 0
        n_r = retrieved.width if retrieved is not None else 0
        hids, kvs = [], []
        for i, layer in enumerate(self.layers[:layers]):
            hids.append(x)
            u, v = (layer.attn.u, layer.attn.v) if self.cfg.untie_r else (self.u, self.v)
            cached = memory.kv[i] if (m and memory.kv and not grad) else None
            mem = memory.states[i] if m else None
            x, kv = layer(x, rks[i], mem, retrieved.at(i) if n_r else None, keys, u, v, i, cached)
            kvs.append(kv)
        hids.append(x)
        return hids, kvs

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
            key = (
                k,
                n_r > 0,
                far,
                cfg.clamp_len,
                dtype,
                dev,
                torch.is_autocast_enabled(dev.type),
                tuple((w._version, w.data_ptr()) for w in weights),
            )
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


def autocast(device: torch.device | str, dtype: str = "auto") -> contextlib.AbstractContextManager:
    """The precision context of ModelConfig.dtype: "auto" = bf16 autocast on CUDA, fp32 on CPU;
    "bfloat16" = bf16 autocast on any device, "float32" = none.

    CPU stays fp32 unless asked, though bf16 is faster on CPUs that multiply it natively (AMX, AVX-512
    BF16; on Zen 4 the flow of 300 judgments took 96 s against 120 s, benchmarks/run_throughput.py):
    bf16 rounds to ~3 digits, which turns the last-bit differences between two runs of the same input
    (another process's threads, another batching) into visible ones. The kill-point and Dask tests
    measured up to 6e-4 in keys and 1e-4 in scores between a resumed or Dask run and an uninterrupted
    one, where fp32 stays within their 1e-5 / 1e-6."""
    device = torch.device(device)
    if dtype == "bfloat16" or (dtype == "auto" and device.type == "cuda"):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()
