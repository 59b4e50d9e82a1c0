"""Opt-in attention diagnostics: per layer and head, the mean and std of the paper's four score terms
(a) q·k, (b) q·W_kR R, (c) u·k, (d) v·W_kR R (each scaled by 1/sqrt(d_head), over visible pairs only),
the attention entropy (nats), and the attention mass on memory, retrieved and connective keys.

Computed only when `model(..., diagnostics=True)`; the forward pass then takes the explicit path."""

from __future__ import annotations

import torch

from pipeline.records import BlockType
from txl.relative import KeyAxis, position_scores


@torch.no_grad()
def summarize_layer(layer: int, q, k, u, v, rk, probs, keys: KeyAxis, scale: float) -> list[dict]:
    b, h, t, _ = q.shape
    n_r = keys.n_retrieved
    if k.size(2) != keys.visible.size(-1):
        raise ValueError(f"layer {layer} does not read the retrieved slots: diagnostics need every layer to")
    kt = k.transpose(-1, -2)
    terms = {
        "a": q @ kt,
        "b": position_scores(q, rk, n_r),
        "c": (u[None, :, None] @ kt).expand(b, h, t, -1),
        "d": position_scores(v[None, :, None].expand(b, h, t, -1), rk, n_r),
    }
    vis = keys.visible.expand(b, h, t, -1).float()
    count = vis.sum((0, 2, 3))
    stats: dict[str, torch.Tensor] = {}
    for name, term in terms.items():
        x = term.float() * scale * vis
        mean = x.sum((0, 2, 3)) / count
        var = (x.square().sum((0, 2, 3)) / count - mean.square()).clamp(min=0)
        stats[f"{name}_mean"], stats[f"{name}_std"] = mean, var.sqrt()
    p = probs.float()
    stats["entropy"] = -(p * p.clamp(min=1e-30).log()).sum(-1).mean((0, 2))
    stats["mass_memory"] = (p * keys.is_memory.float()).sum(-1).mean((0, 2))
    stats["mass_retrieved"] = (p * keys.is_retrieved.float()).sum(-1).mean((0, 2))
    if keys.k_connective is not None:
        stats["mass_connective"] = (p * keys.k_connective[:, None, None, :]).sum(-1).mean((0, 2))
    else:
        stats["mass_connective"] = torch.full((h,), float("nan"))
    cols = {name: s.cpu().tolist() for name, s in stats.items()}
    return [{"layer": layer, "head": hd, **{name: cols[name][hd] for name in cols}} for hd in range(h)]


def to_table(rows: list[dict]):
    """The rows as a pandas DataFrame, one row per (layer, head)."""
    # lazy, a start-up cost: txl.model imports this module; pandas adds ~0.26 s to it (measured)
    import pandas as pd

    return pd.DataFrame(rows)


def tag_bias_frame(model):
    """The learned block-type tag biases by name: one row per (layer, head, query type, key type).
    E.g. how much OPINION queries favour FACTS keys:
    `df.query("query_type == 'OPINION' and key_type == 'FACTS'").bias.mean()`."""
    # lazy, a start-up cost: pandas, as in to_table
    import pandas as pd

    names = [t.value for t in BlockType]
    table = model.tag_bias_table().float().cpu()
    n_layer, n_head, n_q, n_k = table.shape
    return pd.DataFrame(
        {
            "layer": layer,
            "head": head,
            "query_type": names[q],
            "key_type": names[k],
            "bias": table[layer, head, q, k].item(),
        }
        for layer in range(n_layer)
        for head in range(n_head)
        for q in range(n_q)
        for k in range(n_k)
    )
