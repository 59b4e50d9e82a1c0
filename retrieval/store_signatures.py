"""The MinHash signature of each document in the segment-state store, kept as plain hash values.

The encoder (retrieval/store_dedup.py) computes a document's signature with the dedup stage's own code
(retrieval.predict.dedup) when the document enters it, and never injects a near-duplicate's segments
across documents. The store keeps the hash values so that a resumed run, or a later run into the same
OUT_DIR, still knows the signatures of documents it does not encode again. Reading them needs neither
datasketch nor its 0.5 s import (the store is opened by `ldx ask` too).

File: sig-<gen>.parquet beside meta-<gen>.parquet, written by the same commit before the manifest names
it, one row per document: doc_id and its hash values; the MinHash scheme that made them is in the
schema metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.store import atomic_write_table

SIGNATURE_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("minhash", pa.list_(pa.uint64()), nullable=False),
    ]
)


@dataclass
class DocSignatures:
    """doc_id → MinHash hash values [num_perm] uint64, all of one datasketch hash scheme."""

    hashes: dict[str, np.ndarray] = field(default_factory=dict)
    scheme: str = ""

    def put(self, doc_id: str, hashvalues: np.ndarray, scheme: str) -> None:
        if self.hashes and scheme != self.scheme:  # values of two schemes cannot be compared
            raise ValueError(f"MinHash scheme {scheme!r}, the store's signatures are {self.scheme!r}")
        self.scheme = scheme
        self.hashes[doc_id] = np.asarray(hashvalues, dtype=np.uint64)

    def write(self, path: Path, doc_ids: set[str], version: str) -> None:
        """The signatures of `doc_ids` (the documents with segments in the store), atomically."""
        kept = sorted(d for d in self.hashes if d in doc_ids)
        table = pa.Table.from_pydict(
            {"doc_id": kept, "minhash": [self.hashes[d] for d in kept]}, schema=SIGNATURE_SCHEMA
        )
        atomic_write_table(path, table, {"store_version": version, "minhash_scheme": self.scheme})

    @classmethod
    def read(cls, path: Path) -> DocSignatures:
        """What `write` wrote; raises pyarrow's or OSError's error on a damaged file."""
        table = pq.read_table(path, schema=SIGNATURE_SCHEMA)
        meta = pq.read_schema(path).metadata or {}  # a given schema replaces the file's metadata
        column = table.column("minhash").to_pylist()
        return cls(
            {
                d: np.array(h, dtype=np.uint64)
                for d, h in zip(table.column("doc_id").to_pylist(), column, strict=True)
            },
            meta.get(b"minhash_scheme", b"").decode(),
        )
