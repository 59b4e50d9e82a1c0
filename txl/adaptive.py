"""Adaptive input embedding and adaptive softmax (Baevski & Auli 2019; Grave et al. 2017), as used by
Transformer-XL: the vocabulary is split at `cutoffs` into a frequent head and rarer clusters, and with
`div_val > 1` each further cluster gets a smaller embedding (d_embed / div_val**i) projected to d_model.

Cluster order: the head softmax holds the shortlist followed by one logit per tail cluster, cluster i
(1-based) at column `shortlist + i - 1`. Hugging Face's training loss uses this order; the original
MemTransformerLM reads cluster i from column `-i` (reversed) — txl.convert reorders its rows."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _log_softmax(logits: torch.Tensor) -> torch.Tensor:
    # at least fp32: bf16 logits under autocast lose too much in the normaliser
    return F.log_softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), -1)


def _cluster_ends(vocab_size: int, cutoffs: list[int]) -> list[int]:
    return [0, *cutoffs, vocab_size]


class AdaptiveEmbedding(nn.Module):
    """Token ids -> [.., d_proj] vectors, scaled by sqrt(d_proj) as in the reference."""

    def __init__(self, vocab_size: int, d_embed: int, d_proj: int, cutoffs: list[int], div_val: int):
        super().__init__()
        self.d_embed, self.d_proj, self.div_val = d_embed, d_proj, div_val
        self.ends = _cluster_ends(vocab_size, cutoffs)
        self.scale = d_proj**0.5
        self.layers = nn.ModuleList()
        self.projs = nn.ParameterList()
        if div_val == 1:
            self.layers.append(nn.Embedding(vocab_size, d_embed))
            if d_proj != d_embed:
                self.projs.append(nn.Parameter(torch.empty(d_proj, d_embed)))
        else:
            for i in range(len(self.ends) - 1):
                d_i = d_embed // div_val**i
                self.layers.append(nn.Embedding(self.ends[i + 1] - self.ends[i], d_i))
                self.projs.append(nn.Parameter(torch.empty(d_proj, d_i)))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if self.div_val == 1:
            emb = self.layers[0](ids)
            if len(self.projs):
                emb = F.linear(emb, self.projs[0])
            return emb * self.scale
        flat = ids.reshape(-1)
        out = None
        for i, layer in enumerate(self.layers):
            lo, hi = self.ends[i], self.ends[i + 1]
            idx = ((flat >= lo) & (flat < hi)).nonzero().squeeze(1)
            if idx.numel() == 0:
                continue
            emb_i = F.linear(layer(flat[idx] - lo), self.projs[i])
            if out is None:
                out = emb_i.new_zeros(flat.numel(), self.d_proj)
            out.index_copy_(0, idx, emb_i.to(out.dtype))
        return out.view(*ids.shape, self.d_proj) * self.scale


class AdaptiveLogSoftmax(nn.Module):
    """Projected adaptive softmax: [N, d_proj] hidden -> per-token NLL (input order) or full log-probs.

    `projs[i]` is None when cluster i needs no projection (div_val 1 and d_proj == d_embed)."""

    def __init__(self, vocab_size: int, d_embed: int, d_proj: int, cutoffs: list[int], div_val: int):
        super().__init__()
        self.vocab_size, self.div_val = vocab_size, div_val
        self.ends = _cluster_ends(vocab_size, cutoffs)
        self.n_clusters = len(cutoffs)
        self.shortlist = self.ends[1]
        if self.n_clusters:
            self.cluster_weight = nn.Parameter(torch.zeros(self.n_clusters, d_embed))
            self.cluster_bias = nn.Parameter(torch.zeros(self.n_clusters))
        self.layers = nn.ModuleList()
        self.projs = nn.ParameterList()
        self.proj_used = []  # whether cluster i has an entry in self.projs (ParameterList holds no None)
        for i in range(self.n_clusters + 1):
            d_i = d_embed if div_val == 1 else d_embed // div_val**i
            needs_proj = div_val != 1 or d_proj != d_embed
            self.proj_used.append(needs_proj)
            if needs_proj:
                self.projs.append(nn.Parameter(torch.empty(d_proj, d_i)))
            if div_val != 1:
                self.layers.append(nn.Linear(d_i, self.ends[i + 1] - self.ends[i]))
        if div_val == 1:
            self.layers.append(nn.Linear(d_embed, vocab_size))

    def _proj(self, i: int) -> torch.Tensor | None:
        return self.projs[i] if self.proj_used[i] else None

    def _weights(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.div_val == 1:
            lo, hi = self.ends[i], self.ends[i + 1]
            w, b = self.layers[0].weight[lo:hi], self.layers[0].bias[lo:hi]
        else:
            w, b = self.layers[i].weight, self.layers[i].bias
        if i == 0 and self.n_clusters:
            w = torch.cat([w, self.cluster_weight], 0)
            b = torch.cat([b, self.cluster_bias], 0)
        return w, b

    def _logits(self, hidden: torch.Tensor, i: int) -> torch.Tensor:
        w, b = self._weights(i)
        proj = self._proj(i)
        if proj is not None:
            hidden = hidden @ proj
        return F.linear(hidden, w, b)

    def log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """[.., d_proj] -> [.., vocab] log-probabilities."""
        shape = hidden.shape[:-1]
        h = hidden.reshape(-1, hidden.size(-1))
        head = _log_softmax(self._logits(h, 0))
        if not self.n_clusters:
            return head.view(*shape, -1)
        parts = [head[:, : self.shortlist]]
        for i in range(1, self.n_clusters + 1):
            tail = _log_softmax(self._logits(h, i))
            parts.append(head[:, self.shortlist + i - 1, None] + tail)
        return torch.cat(parts, -1).view(*shape, self.vocab_size)

    def nll(self, hidden: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[.., d_proj], [..] -> [..] negative log-likelihood, in input order; tail logits are computed only
        for the tokens of that cluster."""
        shape = target.shape
        h = hidden.reshape(-1, hidden.size(-1))
        t = target.reshape(-1)
        head = _log_softmax(self._logits(h, 0))
        if not self.n_clusters:
            return -head.gather(1, t[:, None]).view(shape)
        out = -head.gather(1, t.clamp(max=self.shortlist - 1)[:, None]).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            lo, hi = self.ends[i], self.ends[i + 1]
            idx = ((t >= lo) & (t < hi)).nonzero().squeeze(1)
            if idx.numel() == 0:
                continue
            tail = _log_softmax(self._logits(h[idx], i))
            lp = head[idx, self.shortlist + i - 1] + tail.gather(1, (t[idx] - lo)[:, None]).squeeze(1)
            out = out.index_copy(0, idx, -lp)
        return out.view(shape)
