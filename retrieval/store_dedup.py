"""Near-duplicates among the documents of a segment-state store, for the encoder's cross-document
injection (retrieval/store_windows.py `Injector`): retrieved memory may come from similar documents,
never from a near-duplicate of the document being encoded (the same judgment published twice, a
contract and its amended copy), whose segments would hand the model the text it is predicting.

The rule, one decision per pair of documents, the same however they are batched:
- a document's signature is the dedup stage's (retrieval.predict.dedup `signatures`: the MinHash of the
  union of its segments' shingles), computed from its segments' text when it enters the encoder; the
  store keeps it (retrieval/store_signatures.py), so a resumed run or a later run into the same OUT_DIR
  knows the signatures of documents it does not encode again;
- document B's segments may be injected into A only if B's signature is known and the pair is not a
  near-duplicate by `duplicates_of` (LSH candidates, kept when the estimated Jaccard reaches the
  threshold: the predict stage's `duplicate_doc_threshold`, so the pairs it flags `near_duplicate` are
  the pairs kept apart here). A document whose signature the store does not know (stored by code from
  before this rule) cannot be told apart from a near-duplicate and is not injected across documents.
Which other documents A may draw on at all is Injector's rule: those with segments in the store when A
first asks. Every such document entered the encoder (or an earlier run) before its first segment was
stored, so its signature is known by then, also for a document encoded beside A in the same window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.records import Segment
from retrieval.store import SegmentStore

if TYPE_CHECKING:
    from retrieval.predict.dedup import Signatures

NUM_PERM = 64  # the dedup stage's (dedup.signatures' and duplicates_of's default)


class StoreDuplicates:
    """The signatures of a store's documents, searchable for near-duplicates (an LSH table over them,
    built on first use and kept up to date as documents enter)."""

    def __init__(self, store: SegmentStore, threshold: float):
        # lazy, a start-up cost: datasketch's import takes 0.7 s, and `ldx ask` imports the encoder
        # (retrieval.inject, retrieval.stage) but never encodes into a store
        from retrieval.predict import dedup

        self._dedup = dedup
        self.store = store
        self.threshold = threshold
        self._seen: Signatures | None = None

    def _known(self) -> Signatures:
        if self._seen is None:
            kept = self.store.signatures
            self._seen = self._dedup.Signatures(
                documents={
                    d: self._dedup.MinHash(num_perm=NUM_PERM, seed=1, hashvalues=h, scheme=kept.scheme)
                    for d, h in kept.hashes.items()
                    if len(h) == NUM_PERM
                }
            )
        return self._seen

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
            self._seen = None
        known = self._known()
        kept.put(doc_id, sig.hashvalues, sig.scheme)
        known.merge(self._dedup.Signatures(documents={doc_id: sig}), unsaved=False)

    def injectable(self, doc_id: str) -> set[str]:
        """The documents whose segments may be injected into `doc_id`'s: every other one of known
        signature that is not its near-duplicate."""
        known = self._known()
        own = known.documents.get(doc_id) if doc_id in self.store.signatures.hashes else None
        near = set()
        if own is not None:
            found = self._dedup.duplicates_of(
                self._dedup.Signatures(documents={doc_id: own}),
                known,
                self.threshold,
                self.threshold,
                NUM_PERM,
            )
            near = {p.b for p in found.documents}
        # known: kept by the store now (a deleted document's is not) and comparable (of the same shape)
        return {
            d for d in self.store.signatures.hashes if d in known.documents and d != doc_id and d not in near
        }
