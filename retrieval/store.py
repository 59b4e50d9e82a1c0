"""The segment-state store under OUT_DIR/index/: FAISS keys, Parquet metadata and compact fp16 states.

Files (one directory):
  manifest.json           the committed generation: which key/metadata files are current, and shapes
  keys-<gen>.faiss        the chosen index; int64 ids (a hash of segment_id): IndexIDMap2 over flat or HNSW,
                          IndexIVFPQ with the ids stored natively (its own id lists delete correctly)
  refine-<gen>.faiss      IVF-PQ only, with refine on: the exact keys (IndexIDMap2 over flat) for re-ranking
  meta-<gen>.parquet      one row per key: id, segment_id, doc_id, seg_idx, block type, state slot
  sig-<gen>.parquet       each document's MinHash signature (retrieval/store_signatures.py)
  states.f16              [slots, L, P, d] float16, memory-mapped; slot rows are appended, never moved
  minilm-<gen>.parquet    the sentence model's vectors of the English segments (retrieval/store_vectors.py)

Consistency: a commit writes a new generation's index and metadata, then swaps `manifest.json`
atomically. A reader follows the manifest, so it always sees an index and a metadata table that belong
together; a crash mid-commit leaves the previous generation in force. States are append-only, and the
metadata of the committed generation says which slots are live.

Index choice (`retrieval.index_type`: flat, hnsw, ivfpq with refine) and its measured trade-offs: see
retrieval/faiss_index.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.process import fault_point
from pipeline.store import atomic_write_json, atomic_write_table
from retrieval.config import RetrievalConfig
from retrieval.faiss_index import flat_index, index_kind, new_index, wanted_kind
from retrieval.store_records import META_SCHEMA, STORE_VERSION, SegmentEntry, StoreError, segment_key_id
from retrieval.store_search import StoreSearch
from retrieval.store_signatures import DocSignatures
from retrieval.store_vectors import StoreVectors, Vectors, VectorsUnreadable, file_name, read_sentence_vectors

PENDING_BYTES = 64 * 2**20  # added states kept in memory before they are written to states.f16

# what a damaged generation raises when read (ArrowInvalid: a truncated Parquet file)
_UNREADABLE = (RuntimeError, OSError, pa.ArrowException, VectorsUnreadable)


class SegmentStore(StoreSearch, StoreVectors):
    """Keys, metadata and compact states of every indexed segment. Open with `create` or `open`."""

    def __init__(
        self,
        root: Path,
        manifest: dict,
        index,
        meta: pa.Table,
        config: RetrievalConfig,
        refine=None,
        sentences: Vectors | None = None,
    ):
        self.root = root
        self.manifest = manifest
        self.index = index
        self.refine = refine  # exact keys beside an IVF-PQ index (None: no re-ranking)
        self.config = config
        self.signatures = DocSignatures()  # each document's, put by the encoder (retrieval/store_dedup.py)
        self._rows: dict[str, dict] = {r["segment_id"]: r for r in meta.to_pylist()}
        self._sid_of: dict[int, str] = {r["id"]: sid for sid, r in self._rows.items()}
        # each document's segment ids: the index stage deletes every document before it encodes it, and a
        # scan of all rows for each would grow with the square of the corpus
        self._by_doc: dict[str, set[str]] = {}
        for sid, r in self._rows.items():
            self._by_doc.setdefault(r["doc_id"], set()).add(sid)
        self._states: np.memmap | None = None
        # [cap, L, P, d]: slots added but not yet in states.f16, the first `_n_pending` of them
        self._pending: np.ndarray | None = None
        self._n_pending = 0
        self._read_only = False  # set by open(mmap=True): a mapped index cannot be written
        self._sentences: Vectors = dict(sentences or {})

    # ---- opening ---------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        root: str | Path,
        dim: int,
        state_shape: tuple[int, int, int] | None = None,
        config: RetrievalConfig | None = None,
        state_layers: tuple[int, ...] | None = None,
        **fields,
    ) -> SegmentStore:
        """An empty store; `state_shape` = (layers, P, d) of the compact states (None: keys only), of the
        model layers `state_layers` (None: every layer, in order).
        `fields` go into its first manifest (the model id): a store killed before its next commit
        still says what built it."""

        cfg = config or RetrievalConfig()
        root = Path(root)
        if (root / "manifest.json").exists():
            raise StoreError(f"{root}: an index already exists here; open it instead")
        root.mkdir(parents=True, exist_ok=True)
        manifest = {
            "version": STORE_VERSION,
            "generation": 0,
            "dim": dim,
            "index_type": cfg.index_type,
            "built": "flat",
            "pooling": cfg.pooling,
            "state_shape": list(state_shape) if state_shape else None,
            "state_layers": list(state_layers) if state_layers is not None else None,
            "n_slots": 0,
            "n_keys": 0,
            "refine": False,
            **fields,
        }
        store = cls(root, manifest, flat_index(dim), META_SCHEMA.empty_table(), cfg)
        store.commit()
        store.discard_uncommitted()  # a create killed before its manifest left its temporary files
        return store

    @classmethod
    def open(
        cls, root: str | Path, mmap: bool = False, config: RetrievalConfig | None = None
    ) -> SegmentStore:
        """The committed generation. `mmap=True` maps the index read-only (for search-only use); `config`
        carries the search knobs (HNSW ef, IVF refine factor)."""
        # lazy, a start-up cost: faiss and its OpenMP runtime (see retrieval/faiss_index.py)
        import faiss

        root = Path(root)
        try:
            manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise StoreError(f"{root}: no index here (manifest.json missing)") from None
        except json.JSONDecodeError as e:
            raise StoreError(f"{root}/manifest.json: damaged ({e.msg})") from None
        if manifest.get("version") != STORE_VERSION:
            raise StoreError(
                f"{root}: index version {manifest.get('version')}, this code reads {STORE_VERSION}"
            )
        gen = manifest["generation"]
        flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if mmap else 0
        try:
            index = faiss.read_index(str(root / f"keys-{gen}.faiss"), flags)
            refine = (
                faiss.read_index(str(root / f"refine-{gen}.faiss"), flags) if manifest.get("refine") else None
            )
            meta = pq.read_table(root / f"meta-{gen}.parquet", schema=META_SCHEMA)
            # a writer carries the sentence vectors into its next generation; `ldx ask` reads them itself
            sentences = {} if mmap else read_sentence_vectors(root, manifest)
            # a store from before signatures were kept has none: its documents' are unknown
            sigs = DocSignatures.read(root / f"sig-{gen}.parquet") if manifest.get("signatures") else None
        except _UNREADABLE as e:
            raise StoreError(f"{root}: generation {gen} unreadable ({str(e).splitlines()[0]})") from None
        if index.ntotal != meta.num_rows or (refine is not None and refine.ntotal != meta.num_rows):
            raise StoreError(f"{root}: index holds {index.ntotal} keys but metadata {meta.num_rows} rows")
        config = config or RetrievalConfig(index_type=manifest["index_type"])
        store = cls(root, manifest, index, meta, config, refine, sentences)
        store.signatures = sigs or store.signatures
        store._read_only = mmap
        return store

    def discard_uncommitted(self) -> None:
        """Remove what a writer killed mid-commit left: files of a generation the manifest never named,
        and temporary files. For the one writer only (the run lock keeps it one): another writer's
        commit in progress would lose its files."""
        gen = self.manifest["generation"]
        current = {
            f"keys-{gen}.faiss",
            f"refine-{gen}.faiss",
            f"meta-{gen}.parquet",
            file_name(gen),
            f"sig-{gen}.parquet",
            "manifest.json",
            "states.f16",
        }
        for path in self.root.iterdir():
            stale = path.name.startswith(
                (".keys-", ".refine-", ".meta-", ".minilm-", ".sig-", ".manifest.json.")
            ) or (
                path.name.startswith(("keys-", "refine-", "meta-", "minilm-", "sig-"))
                and path.name not in current
            )
            if stale and path.is_file():
                path.unlink(missing_ok=True)

    # ---- reading ---------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, segment_id: str) -> bool:
        return segment_id in self._rows

    @property
    def dim(self) -> int:
        return self.manifest["dim"]

    @property
    def state_shape(self) -> tuple[int, int, int] | None:
        s = self.manifest["state_shape"]
        return tuple(s) if s else None

    @property
    def state_layers(self) -> tuple[int, ...] | None:
        """The model layers the stored states are of (and read by); None: every layer, in order."""
        s = self.manifest.get("state_layers")
        return tuple(s) if s is not None else None

    @property
    def state_bytes_per_segment(self) -> int:
        s = self.state_shape
        return int(np.prod(s)) * 2 if s else 0

    def entries(self, doc_id: str | None = None) -> list[dict]:
        """Metadata rows, in segment order within each document."""
        if doc_id is None:
            rows = list(self._rows.values())
        else:
            rows = [self._rows[s] for s in self._by_doc.get(doc_id, ())]
        return sorted(rows, key=lambda r: (r["doc_id"], r["seg_idx"]))

    def entry(self, segment_id: str) -> dict:
        return self._rows[segment_id]

    def keys(self, segment_ids: list[str]) -> np.ndarray:
        """The stored key vectors (reconstructed; approximate for ivfpq without refine)."""
        source = self.refine if self.refine is not None else self.index
        return np.stack([source.reconstruct(self._rows[s]["id"]) for s in segment_ids])

    @property
    def _written_slots(self) -> int:
        """Slots in states.f16; the ones after them are still pending in memory."""
        return self.manifest["n_slots"] - self._n_pending

    def _state_map(self) -> np.memmap | None:
        """The slots written to states.f16 (those still pending in memory are not in it)."""
        shape = self.state_shape
        n = self._written_slots
        if shape is None or n == 0:
            return None
        if self._states is None or self._states.shape[0] != n:
            self._states = np.memmap(self.root / "states.f16", dtype=np.float16, mode="r", shape=(n, *shape))
        return self._states

    def states(self, segment_ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """([n, L, P, d] float16 states, [n, P] bool mask of the filled state slots)."""
        shape = self.state_shape
        if shape is None:
            raise StoreError(f"{self.root}: this index stores no states")
        states = self._state_map()
        out = np.zeros((len(segment_ids), *shape), dtype=np.float16)
        mask = np.zeros((len(segment_ids), shape[1]), dtype=bool)
        written = self._written_slots
        for i, sid in enumerate(segment_ids):
            row = self._rows[sid]
            if row["slot"] >= written:
                out[i] = self._pending[row["slot"] - written]
            elif row["slot"] >= 0 and states is not None:
                out[i] = states[row["slot"]]
            if row["slot"] >= 0:
                mask[i, : row["n_states"]] = True
        return out, mask

    # ---- writing ---------------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise StoreError(f"{self.root}: opened memory-mapped for reading; open without mmap to write")

    def add(
        self, entries: list[SegmentEntry], keys: np.ndarray, states: list[np.ndarray] | None = None
    ) -> None:
        """Add (or replace) segments: unit keys [n, dim] and, optionally, compact states [L, ≤P, d] each.

        Nothing is visible to other readers until `commit()`.
        """
        self._check_writable()
        keys = np.ascontiguousarray(keys, dtype=np.float32)
        if keys.shape != (len(entries), self.dim):
            raise ValueError(f"keys must be [{len(entries)}, {self.dim}], got {keys.shape}")
        if states is not None and len(states) != len(entries):
            raise ValueError("one states array per entry")
        self.delete_segments([e.segment_id for e in entries if e.segment_id in self._rows])
        slots = self._append_states(states) if states is not None else [(-1, 0)] * len(entries)
        ids = np.array([segment_key_id(e.segment_id) for e in entries], dtype=np.int64)
        self._ensure_trained(keys)
        self.index.add_with_ids(keys, ids)
        if self.refine is not None:
            self.refine.add_with_ids(keys, ids)
        for e, i, (slot, n) in zip(entries, ids.tolist(), slots, strict=True):
            self._sid_of[i] = e.segment_id
            self._by_doc.setdefault(e.doc_id, set()).add(e.segment_id)
            self._rows[e.segment_id] = {
                "id": i,
                "segment_id": e.segment_id,
                "doc_id": e.doc_id,
                "seg_idx": e.seg_idx,
                "block_type": e.block_type,
                "slot": slot,
                "n_states": n,
            }

    def _ensure_trained(self, new_keys: np.ndarray) -> None:
        """Switch to the approximate index that the store's size asks for (faiss_index.wanted_kind): once
        enough keys exist to train it, or to make exact search too slow."""
        want = wanted_kind(self.manifest["index_type"], len(self) + len(new_keys), self.config)
        if self.manifest["built"] == want or want == "flat":
            return
        old = self._all_keys()
        train = np.concatenate([old[1], new_keys]) if len(old[0]) else new_keys
        index = new_index(want, self.dim, self.config, len(train))
        if not index.is_trained:
            index.train(train)
        if len(old[0]):
            index.add_with_ids(old[1], old[0])
        if want == "ivfpq" and self.config.ivf_refine_k_factor > 0:
            self.refine = self.index  # the flat index built so far holds the exact keys already
        self.index = index
        self.manifest["built"] = index_kind(index)
        self.manifest["refine"] = self.refine is not None

    def _all_keys(self) -> tuple[np.ndarray, np.ndarray]:
        ids = np.array([r["id"] for r in self._rows.values()], dtype=np.int64)
        if not len(ids):
            return ids, np.zeros((0, self.dim), dtype=np.float32)
        return ids, self.index.reconstruct_batch(ids).astype(np.float32)

    def _append_states(self, states: list[np.ndarray]) -> list[tuple[int, int]]:
        """New slots for the states, kept in memory until `_flush_states` (commit, or PENDING_BYTES of them):
        a store fed one segment at a time would otherwise rewrite and re-map states.f16 for each. They go
        into one buffer, reused after each flush, rather than an array of 64 KB per slot stacked into a
        copy at each flush (peak RSS 1,931 -> 1,862 MiB on benchmarks/index_memory.py)."""
        shape = self.state_shape
        if shape is None:
            raise StoreError(f"{self.root}: created without state_shape, cannot store states")
        n_layers, p, d = shape
        for s in states:
            if s.ndim != 3 or s.shape[0] != n_layers or s.shape[1] > p or s.shape[2] != d:
                raise ValueError(f"states must be [{n_layers}, ≤{p}, {d}], got {s.shape}")
        if self._pending is None:
            cap = max(1, PENDING_BYTES // self.state_bytes_per_segment)
            self._pending = np.empty((cap, *shape), dtype=np.float16)
        out = []
        for s in states:
            if self._n_pending == len(self._pending):
                self._flush_states()
            slot = self._pending[self._n_pending]
            slot[:, s.shape[1] :] = 0
            slot[:, : s.shape[1]] = s
            self._n_pending += 1
            out.append((self.manifest["n_slots"], s.shape[1]))
            self.manifest["n_slots"] += 1
        return out

    def _flush_states(self) -> None:
        """Write the pending slots after the ones in states.f16, durably."""
        if not self._n_pending:
            return
        written = self._written_slots
        buf = self._pending[: self._n_pending]
        path = self.root / "states.f16"
        with open(path, "r+b" if path.exists() else "wb") as f:
            # past the committed slots: bytes a crashed writer left there are not live, overwrite them
            f.seek(written * buf[0].nbytes)
            f.write(buf.data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
        self._n_pending = 0
        self._states = None

    def delete_segments(self, segment_ids: list[str]) -> int:
        self._check_writable()
        gone = [self._rows.pop(s) for s in segment_ids if s in self._rows]
        if not gone:
            return 0
        for r in gone:
            del self._sid_of[r["id"]]
            self._sentences.pop(r["segment_id"], None)
            doc = self._by_doc[r["doc_id"]]
            doc.discard(r["segment_id"])
            if not doc:
                del self._by_doc[r["doc_id"]]
        if self.manifest["built"] == "hnsw":
            # HNSW graphs cannot drop nodes: rebuild from the surviving keys (the rows left)
            ids, keys = self._all_keys()
            self.index = new_index("hnsw", self.dim, self.config, 0)
            if len(ids):
                self.index.add_with_ids(keys, ids)
        else:
            self.index.remove_ids(np.array([r["id"] for r in gone], dtype=np.int64))
        if self.refine is not None:
            self.refine.remove_ids(np.array([r["id"] for r in gone], dtype=np.int64))
        return len(gone)

    def delete_document(self, doc_id: str) -> int:
        """Remove every segment of a document, and its signature; returns how many. Visible after `commit()`."""
        self.signatures.hashes.pop(doc_id, None)
        return self.delete_segments(list(self._by_doc.get(doc_id, ())))

    def commit(self) -> None:
        """Write the next generation and switch the manifest to it atomically; drop the old generation."""
        self._check_writable()
        old = self.manifest["generation"]
        gen = old + 1 if (self.root / f"keys-{old}.faiss").exists() else old
        self._flush_states()
        rows = self.entries()
        meta = pa.Table.from_pylist(rows, schema=META_SCHEMA)
        if self.index.ntotal != meta.num_rows:
            raise StoreError(
                f"{self.root}: {self.index.ntotal} keys vs {meta.num_rows} metadata rows; not committed"
            )
        self._write_index(self.index, f"keys-{gen}.faiss")
        if self.refine is not None:
            self._write_index(self.refine, f"refine-{gen}.faiss")
        atomic_write_table(self.root / f"meta-{gen}.parquet", meta, {"store_version": str(STORE_VERSION)})
        self.signatures.write(self.root / f"sig-{gen}.parquet", set(self._by_doc), str(STORE_VERSION))
        self._write_sentence_vectors(gen)
        self.manifest.update(generation=gen, n_keys=len(rows), signatures=True)
        atomic_write_json(self.root / "manifest.json", self.manifest)
        fault_point("manifest_write")
        if gen != old:
            for stale in (
                f"keys-{old}.faiss",
                f"refine-{old}.faiss",
                f"meta-{old}.parquet",
                f"sig-{old}.parquet",
                file_name(old),
            ):
                (self.root / stale).unlink(missing_ok=True)

    def _write_index(self, index, name: str) -> None:
        # lazy, a start-up cost: faiss and its OpenMP runtime (see retrieval/faiss_index.py)
        import faiss

        tmp = self.root / f".{name}.tmp"
        faiss.write_index(index, str(tmp))
        fault_point("faiss_write")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, self.root / name)
