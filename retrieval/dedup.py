"""Near-duplicate documents and shared passages (MinHash over segment shingles), and identical document
prefixes, whose encoded states can be reused instead of encoding the same segments twice.

Shingles are character 5-grams for Chinese and word 4-grams for English, taken per segment; a
document's signature covers the union of its segments' shingles. LSH finds candidate pairs, which are
kept only when their estimated Jaccard similarity reaches the threshold.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from datasketch import MinHash, MinHashLSH

from pipeline.records import BlockType, Segment

_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


def shingles(text: str, zh_k: int = 5, en_k: int = 4) -> set[bytes]:
    if _CJK.search(text):
        t = _SPACE.sub("", text)
        return {t[i : i + zh_k].encode() for i in range(max(1, len(t) - zh_k + 1))} if t else set()
    words = [w.lower() for w in _WORD.findall(text)]
    return {" ".join(words[i : i + en_k]).encode() for i in range(max(1, len(words) - en_k + 1))} if words else set()


@dataclass(frozen=True)
class DuplicatePair:
    a: str  # doc_id or segment_id
    b: str
    similarity: float  # estimated Jaccard


@dataclass
class DedupResult:
    documents: list[DuplicatePair] = field(default_factory=list)
    passages: list[DuplicatePair] = field(default_factory=list)  # segment pairs across documents


def _signatures(sets: list[set[bytes]], num_perm: int) -> list[MinHash]:
    # crc32 is a C call and stable across processes; datasketch's default sha1 is the bottleneck here
    return MinHash.bulk([list(s) for s in sets], num_perm=num_perm, seed=1, hashfunc=zlib.crc32)


def _pairs(keys: list[str], sigs: list[MinHash], threshold: float, num_perm: int, same_doc) -> list[DuplicatePair]:
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    index = dict(zip(keys, sigs, strict=True))  # a key given twice counts once
    for key, sig in index.items():
        lsh.insert(key, sig)
    out = []
    for key, sig in index.items():
        for other in lsh.query(sig):
            if other <= key or same_doc(key, other):
                continue
            sim = sig.jaccard(index[other])
            if sim >= threshold:
                out.append(DuplicatePair(key, other, sim))
    return sorted(out, key=lambda p: (-p.similarity, p.a, p.b))


def find_duplicates(
    segments_by_doc: dict[str, list[Segment]],
    doc_threshold: float = 0.8,
    passage_threshold: float = 0.8,
    min_shingles: int = 20,
    num_perm: int = 64,
    skip_passage_types: frozenset[BlockType] = frozenset(),
) -> DedupResult:
    """Near-duplicate document pairs and cross-document passage (segment) pairs of a corpus.

    Segments with fewer than `min_shingles` shingles (captions, signatures, one-line items) are too
    short to call shared passages; every judgment has a 审判员 line in common. Segments of
    `skip_passage_types` (e.g. the court's standard notices) still count for document similarity.
    """
    seg_ids, seg_sigs, doc_ids, doc_sigs = [], [], [], []
    for doc_id, segments in segments_by_doc.items():
        sets = [shingles(s.text) for s in segments]
        sigs = _signatures([sh for sh in sets if sh], num_perm)
        if not sigs:
            continue
        # the MinHash of a union is the element-wise minimum of the parts' MinHashes
        doc_sig = sigs[0].copy()
        doc_sig.hashvalues = np.minimum.reduce([m.hashvalues for m in sigs])
        doc_ids.append(doc_id)
        doc_sigs.append(doc_sig)
        kept = iter(sigs)
        for s, sh in zip(segments, sets, strict=True):
            sig = next(kept) if sh else None
            if len(sh) >= min_shingles and s.type not in skip_passage_types:
                seg_ids.append(s.segment_id)
                seg_sigs.append(sig)
    result = DedupResult()
    if doc_ids:
        result.documents = _pairs(doc_ids, doc_sigs, doc_threshold, num_perm, lambda a, b: False)
    if seg_ids:
        result.passages = _pairs(seg_ids, seg_sigs, passage_threshold, num_perm,
                                 lambda a, b: a.rsplit(":", 1)[0] == b.rsplit(":", 1)[0])
    return result


def prefix_keys(segments: Iterable[Segment]) -> list[str]:
    """One key per segment that names the segment and everything before it in its document.

    A Transformer-XL state depends on the segment and its memory, i.e. on the whole prefix, so two
    documents share the encoded states of segment i exactly when their keys at i are equal.
    """
    h = hashlib.sha256()
    keys = []
    for s in segments:
        h.update(f"{s.type}\x1f{s.text}\x1e".encode())
        keys.append(h.copy().hexdigest()[:32])
    return keys


class PrefixStateCache:
    """Encoded states by prefix key: `get` before encoding a segment, `put` after. Counts its hits."""

    def __init__(self) -> None:
        self._states: dict[str, object] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: str):
        state = self._states.get(key)
        if state is None:
            self.misses += 1
        else:
            self.hits += 1
        return state

    def put(self, key: str, state) -> None:
        self._states[key] = state

    @property
    def saving(self) -> float:
        """Share of segment encodings answered from the cache."""
        return self.hits / max(1, self.hits + self.misses)


def shared_prefix_saving(segments_by_doc: dict[str, list[Segment]]) -> dict[str, float]:
    """How many segment encodings a corpus saves by reusing identical prefixes (no model needed)."""
    seen: set[str] = set()
    total = reused = tokens = reused_tokens = 0
    for segments in segments_by_doc.values():
        for s, key in zip(segments, prefix_keys(segments), strict=True):
            total += 1
            tokens += s.n_tokens
            if key in seen:
                reused += 1
                reused_tokens += s.n_tokens
            seen.add(key)
    return {
        "segments": total,
        "segments_reused": reused,
        "segment_saving": reused / max(1, total),
        "token_saving": reused_tokens / max(1, tokens),
    }
