"""Near-duplicates among the documents of a segment-state store, for the encoder's cross-document
injection (retrieval/store_windows.py `Injector`): retrieved memory may come from similar documents,
never from a near-duplicate of the document being encoded (the same judgment published twice, a
contract and its amended copy), whose segments would hand the model the text it is predicting.

The rule, one decision per pair of documents, the same however they are batched:
- a document's signature is the dedup stage's (retrieval.predict.dedup `signatures`: the MinHash of the
  union of its segments' shingles), computed from its segments' text when it enters the encoder; the
  store keeps it (retrieval/store_signatures.py), so a resumed run or a later run into the same OUT_DIR
  knows the signatures of documents it does not encode again;
- document B's segments may be injected into A only if B's signature is known and the MinHash
  estimate of their Jaccard similarity (`MinHash.jaccard`: the share of equal hash values) is below the
  predict stage's `duplicate_doc_threshold`. Every pair is compared, not LSH candidates only
  (`duplicates_of`): at 0.8 and 64 permutations its 5 bands of 11 miss pairs estimated at 0.9 (a real
  judgment with four characters changed, tests/test_store_dedup.py), so it keeps apart every pair the
  predict stage flags `near_duplicate`, and those its LSH misses. A document whose signature the store
  does not know (stored by code from before this rule) cannot be told apart from a near-duplicate and
  is not injected across documents.
Which other documents A may draw on at all is Injector's rule: those with segments in the store when A
first asks. Every such document entered the encoder (or an earlier run) before its first segment was
stored, so its signature is known by then, also for a document encoded beside A in the same window.
"""

from __future__ import annotations

import numpy as np

from pipeline.records import Segment
from retrieval.store import SegmentStore

NUM_PERM = 64  # the dedup stage's (the default of dedup.signatures)


class StoreDuplicates:
    """The signatures of a store's documents as one matrix of hash values, compared at once with a
    document's (in amortised growing rows as documents enter)."""

    def __init__(self, store: SegmentStore, threshold: float):
        # `ldx ask` imports the encoder (retrieval.inject, retrieval.stage) but never encodes into a store:
        # lazy, a start-up cost (datasketch's import takes 0.7 s)
        from retrieval.predict import dedup

        self._dedup = dedup
        self.store = store
        self.threshold = threshold
        self._row: dict[str, int] | None = None  # doc_id -> its row of _hashes, built on first use
        self._hashes = np.zeros((0, NUM_PERM), dtype=np.uint64)

    def _rows(self) -> dict[str, int]:
        if self._row is None:
            kept = {d: h for d, h in self.store.signatures.hashes.items() if len(h) == NUM_PERM}
            self._row = {d: i for i, d in enumerate(kept)}
            self._hashes = np.stack(list(kept.values())) if kept else self._hashes
        return self._row

    def enter(self, doc_id: str, segments: list[Segment]) -> None:
        """The document enters the encoder: its signature, from its segments' text, goes into the store
        (replacing an earlier one). A document without a single shingle has none."""
        kept = self.store.signatures
        sig = self._dedup.signatures({doc_id: segments}, num_perm=NUM_PERM).documents.get(doc_id)
        if sig is None:
            kept.hashes.pop(doc_id, None)
            return
        if kept.hashes and kept.scheme != sig.scheme:  # kept by another datasketch: not comparable
            kept.hashes.clear()
            self._row = None
        kept.put(doc_id, sig.hashvalues, sig.scheme)
        rows = self._rows()
        if doc_id not in rows:
            rows[doc_id] = len(rows)
            if len(rows) > len(self._hashes):  # room for as many rows again
                grown = np.zeros((2 * len(rows), NUM_PERM), dtype=np.uint64)
                grown[: len(self._hashes)] = self._hashes
                self._hashes = grown
        self._hashes[rows[doc_id]] = kept.hashes[doc_id]

    def injectable(self, doc_id: str) -> set[str]:
        """The documents whose segments may be injected into `doc_id`'s: every other one of known
        signature that is not its near-duplicate."""
        rows = self._rows()
        kept = self.store.signatures.hashes  # a document deleted since is not injectable
        if doc_id not in kept or doc_id not in rows:
            near = set()
        else:
            equal = np.count_nonzero(self._hashes[: len(rows)] == self._hashes[rows[doc_id]], axis=1)
            similar = (equal / NUM_PERM >= self.threshold).tolist()
            near = {d for d, i in rows.items() if similar[i]}
        return {d for d in kept if d in rows and d != doc_id and d not in near}
