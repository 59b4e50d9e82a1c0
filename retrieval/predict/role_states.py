"""What the role head's Transformer-XL towers read: every unit (segment, block or sentence) of a document
encoded in reading order with recurrence memory, blind to the rule types.

Blind means every token is tagged OTHER and every unit starts with the OTHER block token: the model's
tag biases and block tokens would otherwise hand the head the very types it is meant to recover (and a
document the rules cannot read has no types to give). A unit longer than `chunk` tokens is encoded as
consecutive chunks, so no window is longer than the model was trained on; its key is the
token-weighted mean of its chunks' keys.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline.paths import HEADS_DIR, MODELS_DIR
from pipeline.records import BlockType, Segment, sha256_file
from retrieval.encoder import load_encoder
from retrieval.inject import DocInput, encode_documents
from retrieval.predict.heads import RoleHead, TxlStates, txl_views
from txl.keys import attach, load_key_head
from txl.model import autocast

# The key of a unit that the towers read goes through this key head, the one the shipped role heads were
# trained with: the retrieval key head (data/models/keys.pt) may change without retraining them.
ROLE_KEYS = HEADS_DIR / "role_keys.pt"


def encoder_identity(checkpoint: Path) -> dict[str, str]:
    return {"file": checkpoint.name, "sha256": sha256_file(checkpoint)}


def role_encoder(checkpoint: Path, device: str = "auto") -> tuple:
    """(model, tokenizer) of a checkpoint, its keys through the role heads' key head when that was
    trained on this checkpoint (raw keys otherwise)."""
    model, tokenizer = load_encoder(checkpoint, device, "raw")
    head = load_key_head(ROLE_KEYS) if ROLE_KEYS.is_file() else None
    if head is not None and head.encoder_sha256 == sha256_file(checkpoint):
        attach(model, head)
    return model, tokenizer


def head_encoder(head: RoleHead, device: str = "auto") -> tuple | None:
    """(model, tokenizer) of the checkpoint a role head's encoder towers were trained on, if it is in
    data/models/ unchanged (None otherwise): states of any other model would mean nothing to them."""
    path = MODELS_DIR / head.encoder.get("file", "")
    if not path.is_file() or encoder_identity(path) != head.encoder:
        return None
    return role_encoder(path, device)


def states_of(encoder: tuple, decay: float) -> Callable[[list[list[str]]], TxlStates]:
    """The `encode` callable retrieval.predict.train takes: units of each document -> their states."""
    model, tokenizer = encoder
    return lambda docs: unit_states(model, tokenizer, docs, decay)


def _chunks(doc_id: str, units: list[str], tokenizer, chunk: int) -> tuple[DocInput, list[int]]:
    """One document as blind segments: (encoder input, unit index of each segment)."""
    encodings = tokenizer.hf.encode_batch(units, add_special_tokens=False) if units else []
    segments, ids, owner = [], [], []
    for u, enc in enumerate(encodings):
        tokens = tokenizer.prefix_ids(BlockType.OTHER, u == 0) + enc.ids
        for start in range(0, len(tokens), chunk):
            segments.append(Segment(doc_id, len(segments), u, BlockType.OTHER, "", 0, 0, 0))
            ids.append(tokens[start : start + chunk])
            owner.append(u)
    return DocInput(segments, ids), owner


def unit_states(
    model, tokenizer, docs: list[list[str]], decay: float, chunk: int = 128, dtype: str = "auto"
) -> TxlStates:
    """Per document, txl_views of its units: [n, d] keys and [n, 2d] memory views. `dtype`: the encoding's
    precision (txl.config.ModelConfig.dtype)."""
    inputs, owners = [], []
    for i, units in enumerate(docs):
        doc_input, owner = _chunks(f"role-{i}", units, tokenizer, chunk)
        inputs.append(doc_input)
        owners.append(owner)
    mem_len = model.cfg.mem_len or chunk
    with autocast(next(model.parameters()).device, dtype):
        encoded_docs = encode_documents(model, inputs)
    out = []
    for units, owner, encoded in zip(docs, owners, encoded_docs, strict=True):
        d = model.cfg.d_model
        keys = np.zeros((len(units), d), np.float32)
        hidden: list[list[np.ndarray]] = [[] for _ in units]
        for u, seg in zip(owner, encoded, strict=True):
            h = seg.hidden.float().cpu().numpy()
            keys[u] += seg.key * h.shape[0]
            hidden[u].append(h)
        keys /= np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)
        out.append(txl_views(keys, [np.concatenate(h) for h in hidden], mem_len, decay))
    return out
