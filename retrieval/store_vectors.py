"""The sentence model's vectors of a run's English segments, kept in the segment-state store (OUT_DIR/index/).

`ldx run`'s index stage embeds each English segment it indexes with the packaged sentence model
(retrieval.sentence) and the store writes them with its other parts: one file per generation,
`minilm-<gen>.parquet` (segment_id, a hash of the segment's text, the unit vector), written at `commit`
before the manifest names that generation, so a run killed before its commit leaves the previous
generation's vectors in force and a resume embeds the documents it had not committed again; every
segment has at most one vector, which goes with its segment when that is deleted or replaced.

`ldx ask` reads them for its "minilm" arm (retrieval.evidence.SentenceArm) with `read_sentence_vectors`,
which needs neither FAISS nor the states. A vector counts only when its text hash matches the segment
the run's tables hold and the manifest names the same sentence model; whatever is missing (an index
written before the vectors were, a run without a checkpoint) is embedded at ask time.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.process import fault_point
from pipeline.store import atomic_write_table
from retrieval.sentence import DIM, MODEL_ID

PREFIX = "minilm-"
SCHEMA = pa.schema(
    [
        pa.field("segment_id", pa.string(), nullable=False),
        pa.field("text_hash", pa.int64(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), DIM), nullable=False),
    ]
)

# segment_id -> (text hash, [DIM] float32 unit vector)
Vectors = dict[str, tuple[int, np.ndarray]]


class VectorsUnreadable(RuntimeError):
    """The vectors file the manifest names is missing or damaged; the message names it."""


def text_hash(text: str) -> int:
    """63 bits of the text's blake2b hash: a stored vector belongs to exactly this text."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big") >> 1


def file_name(gen: int) -> str:
    return f"{PREFIX}{gen}.parquet"


class StoreVectors:
    """The sentence-vector part of `retrieval.store.SegmentStore` (which sets `root`, `manifest`,
    `_rows` and `_sentences`)."""

    root: Path
    manifest: dict
    _rows: dict[str, dict]
    _sentences: Vectors

    def add_sentence_vectors(self, segment_ids: list[str], texts: list[str], vectors: np.ndarray) -> None:
        """Set the vectors of these segments (kept in memory until `commit`)."""
        for sid, text, vec in zip(segment_ids, texts, np.asarray(vectors, dtype=np.float32), strict=True):
            self._sentences[sid] = (text_hash(text), vec)

    def has_sentence_vector(self, segment_id: str, text: str) -> bool:
        held = self._sentences.get(segment_id)
        return held is not None and held[0] == text_hash(text)

    @property
    def n_sentence_vectors(self) -> int:
        return sum(sid in self._rows for sid in self._sentences)

    def _write_sentence_vectors(self, gen: int) -> None:
        """This generation's vectors, of the segments the store holds; none written when it has none."""
        live = sorted(sid for sid in self._sentences if sid in self._rows)
        self._sentences = {sid: self._sentences[sid] for sid in live}
        if not live:
            self.manifest.pop("sentence_model", None)
            return
        flat = np.concatenate([self._sentences[sid][1] for sid in live]).astype(np.float32)
        table = pa.table(
            {
                "segment_id": live,
                "text_hash": [self._sentences[sid][0] for sid in live],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(flat), DIM),
            },
            schema=SCHEMA,
        )
        atomic_write_table(self.root / file_name(gen), table, {"sentence_model": MODEL_ID})
        fault_point("sentence_write")
        self.manifest["sentence_model"] = MODEL_ID


def read_sentence_vectors(root: Path, manifest: dict | None = None) -> Vectors:
    """The committed generation's vectors ({} when it has none, or they are another model's)."""
    if manifest is None:
        try:
            manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}
    if manifest.get("sentence_model") != MODEL_ID:
        return {}
    path = root / file_name(manifest["generation"])
    try:
        table = pq.read_table(path, schema=SCHEMA)
    except (OSError, pa.ArrowException) as e:
        raise VectorsUnreadable(f"{path}: unreadable ({str(e).splitlines()[0]})") from None
    flat = table.column("vector").combine_chunks().values.to_numpy(zero_copy_only=False)
    matrix = flat.astype(np.float32, copy=False).reshape(-1, DIM)
    hashes = table.column("text_hash").to_pylist()
    return {
        sid: (h, matrix[i])
        for i, (sid, h) in enumerate(zip(table.column("segment_id").to_pylist(), hashes, strict=True))
    }
