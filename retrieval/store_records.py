"""What a segment store records beside its keys: the metadata schema and version, the entry of one
segment, the stable FAISS id of a segment id, and the store's error (retrieval/store.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow as pa

STORE_VERSION = 1
META_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("segment_id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        ("seg_idx", pa.int32()),
        ("block_type", pa.string()),
        ("slot", pa.int64()),  # row in states.f16, -1 when no states were stored
        ("n_states", pa.int16()),  # pooled states in the slot (≤ P; a short segment has fewer)
    ]
)


class StoreError(RuntimeError):
    """An index directory that is missing, damaged or built with other shapes; the message names it."""


def segment_key_id(segment_id: str) -> int:
    """Stable non-negative int64 FAISS id of a segment_id (63 bits of its blake2b hash)."""
    return int.from_bytes(hashlib.blake2b(segment_id.encode(), digest_size=8).digest(), "big") >> 1


@dataclass
class SegmentEntry:
    """What the store records beside a segment's key."""

    segment_id: str
    doc_id: str
    seg_idx: int
    block_type: str
