"""The connective-attention summary of a document: how much attention the Transformer-XL puts on
connective keys (但是, however, provided that …) against their share of the keys."""

from __future__ import annotations

import numpy as np
import torch

from pipeline.records import Document, Prediction, Segment
from pipeline.tokenizer import encode_segments


def connective_attention(doc: Document, segs: list[Segment], model, max_segments: int) -> Prediction | None:
    """Attention mass the model puts on connective keys, against their share of the keys (lift > 1: the
    model looks at connectives more than their number alone explains), over the document's first
    segments read as one causal window of at most seg + memory = 2·mem_len tokens — the widest span of
    keys the model attends over when it encodes — in a single diagnostics pass."""
    net, tokenizer = model
    ids, mask = [], []
    for seg_ids, seg_mask in encode_segments(segs[:max_segments], tokenizer):
        ids += seg_ids
        mask += seg_mask
    width = 2 * (net.cfg.mem_len or 128)
    ids, mask = ids[:width], np.array(mask[:width], dtype=bool)
    if not mask.any():
        return None  # no connective among the keys: nothing to summarise
    device = next(net.parameters()).device
    with torch.no_grad():
        out = net(
            torch.tensor([ids], device=device),
            connective_mask=torch.from_numpy(mask)[None].to(device),
            diagnostics=True,
        )
    table = out.diagnostics
    if table is None or table["mass_connective"].isna().all():
        return None
    mass = float(table["mass_connective"].mean())
    # each query sees the keys up to itself; average their connective share as the mass is averaged
    share = float(np.mean(np.cumsum(mask) / np.arange(1, len(mask) + 1)))
    lift = mass / share if share > 0 else 0.0
    model_id = f"txl:{getattr(net.cfg, 'n_layer', '?')}L"
    return Prediction(
        doc.doc_id,
        "connective_attention",
        f"{lift:.3f}",
        lift,
        model_id,
        None,
        [f"{mass:.6g}", f"{share:.6g}", f"{lift:.6g}"],
    )
