"""The encoder the index was built with: loading it, and turning a query text into a key of the store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from pipeline.paths import SHIPPED_CHECKPOINT
from pipeline.records import BlockType, Segment, sha256_file  # noqa: F401  (re-exported: checkpoint identity)
from pipeline.tokenizer import encode_segment, load_tokenizer
from txl.checkpoint import load_model
from txl.ddp import pick_device
from txl.keys import attach, head_for, model_key


def checkpoint_file(configured: str | None) -> Path | None:
    """The configured checkpoint, else the shipped language model (data/models/txl_lm.pt; the other
    files there are heads trained on it), else None."""
    if configured:
        return Path(configured)
    return SHIPPED_CHECKPOINT if SHIPPED_CHECKPOINT.is_file() else None


def load_encoder(checkpoint: Path, device: str = "auto", keys: str = "auto"):
    """(model in eval mode, tokenizer) of a checkpoint; the shipped tokenizer unless the checkpoint names one.
    The model's keys go through the key head `keys` names (txl.keys.head_for: by default the shipped one
    when it was trained on this checkpoint)."""
    model, extra = load_model(checkpoint, pick_device(device))
    attach(model, head_for(checkpoint, keys))
    return model, load_tokenizer(extra.get("tokenizer"))


def query_ids(model, tokenizer, text: str) -> list[int]:
    """A query's token ids as `encode_query` reads them: a first segment of its own, cut to mem_len."""
    seg = Segment("query", 0, 0, BlockType.OTHER, text, 0, 0, len(text))
    return encode_segment(seg, tokenizer)[0][: model.cfg.mem_len or None]


def encode_query(model, tokenizer, text: str, pooling: str = "mean") -> np.ndarray:
    """A query as the store sees a segment: encoded alone (no memory), its last layer pooled to one key
    (through the model's key head, when it has one)."""
    ids = query_ids(model, tokenizer, text)
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(torch.tensor([ids], device=device))
    return model_key(model, out, 0, slice(None), ids, pooling)
