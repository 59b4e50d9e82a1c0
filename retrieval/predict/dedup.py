"""Near-duplicate documents and shared passages (MinHash over segment shingles), and identical document
prefixes, whose encoded states can be reused instead of encoding the same segments twice.

Shingles are character 5-grams for Chinese and word 4-grams for English, taken per segment; a
document's signature covers the union of its segments' shingles. LSH finds candidate pairs, which are
kept only when their estimated Jaccard similarity reaches the threshold. The signatures of documents
already seen persist under OUT_DIR (SignatureStore), so duplicates are found across batches and runs.
"""

from __future__ import annotations

import hashlib
import io
import re
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from datasketch import MinHash, MinHashLSH
from filelock import FileLock

from pipeline.records import BlockType, Segment, segment_place
from pipeline.store import atomic_write_bytes

_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


def shingles(text: str, zh_k: int = 5, en_k: int = 4) -> set[bytes]:
    if _CJK.search(text):
        t = _SPACE.sub("", text)
        return {t[i : i + zh_k].encode() for i in range(max(1, len(t) - zh_k + 1))} if t else set()
    words = [w.lower() for w in _WORD.findall(text)]
    return (
        {" ".join(words[i : i + en_k]).encode() for i in range(max(1, len(words) - en_k + 1))}
        if words
        else set()
    )


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


@dataclass
class Signatures:
    """MinHash signatures by id: whole documents, and the segments long enough to be shared passages."""

    documents: dict[str, MinHash] = field(default_factory=dict)
    passages: dict[str, MinHash] = field(default_factory=dict)
    # LSH tables over the entries, by (kind, threshold, num_perm), kept up to date by `merge`: a batch is
    # matched against the earlier ones without building a table of every signature for each batch
    _lsh: dict[tuple[str, float, int], MinHashLSH] = field(default_factory=dict, repr=False, compare=False)
    # what `merge` added since SignatureStore last wrote it down
    _unsaved: list[Signatures] = field(default_factory=list, repr=False, compare=False)

    def merge(self, other: Signatures) -> None:
        """Add `other`'s entries; an id seen again replaces its entry, so reruns add nothing."""
        self.documents.update(other.documents)
        self.passages.update(other.passages)
        for (kind, _, _), lsh in self._lsh.items():
            _insert(lsh, getattr(other, kind))
        self._unsaved.append(other)

    def lsh(self, kind: str, threshold: float, num_perm: int) -> MinHashLSH:
        """The LSH table over the `kind` ("documents" or "passages") entries, built on first use."""
        key = (kind, threshold, num_perm)
        if key not in self._lsh:
            self._lsh[key] = _insert(_table(threshold, num_perm), getattr(self, kind))
        return self._lsh[key]


# The LSH only proposes candidates, each then checked against the threshold; its default banding (false
# positives and negatives weighed alike: 5 bands of 11 at 0.8, 64 permutations) proposed a pair at the
# threshold 36% of the time and at 0.85 60%. Weighing misses 19 to 1 gives 10 bands of 6: 95% at 0.8,
# 99% at 0.85, for more candidates to check (15% of pairs at 0.5).
LSH_WEIGHTS = (0.05, 0.95)


def _table(threshold: float, num_perm: int) -> MinHashLSH:
    return MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)


def _insert(lsh: MinHashLSH, entries: dict[str, MinHash]) -> MinHashLSH:
    for key, sig in entries.items():
        if key in lsh:  # a rerun's entry replaces the earlier one
            lsh.remove(key)
        lsh.insert(key, sig)
    return lsh


def signatures(
    segments_by_doc: dict[str, list[Segment]],
    min_shingles: int = 20,
    num_perm: int = 64,
    skip_passage_types: frozenset[BlockType] = frozenset(),
) -> Signatures:
    out = Signatures()
    for doc_id, segments in segments_by_doc.items():
        sets = [shingles(s.text) for s in segments]
        sigs = _signatures([sh for sh in sets if sh], num_perm)
        if not sigs:
            continue
        # the MinHash of a union is the element-wise minimum of the parts' MinHashes
        doc_sig = sigs[0].copy()
        doc_sig.hashvalues = np.minimum.reduce([m.hashvalues for m in sigs])
        out.documents[doc_id] = doc_sig
        kept = iter(sigs)
        for s, sh in zip(segments, sets, strict=True):
            sig = next(kept) if sh else None
            if len(sh) >= min_shingles and s.type not in skip_passage_types:
                out.passages[s.segment_id] = sig
    return out


def _pairs(
    new: dict[str, MinHash], seen: Signatures, kind: str, threshold: float, num_perm: int, same_doc
) -> list[DuplicatePair]:
    """Pairs with at least one side in `new`: new–new once each (a < b), new–seen with the new id as `a`.

    The candidates are those an LSH table over {seen, new} would give, an id in both counting as new (a
    rerun, so never paired with itself): a table of the batch alone, and seen's own table less the ids
    the batch brings again."""
    old = getattr(seen, kind)
    index = {**old, **new}
    seen_lsh = seen.lsh(kind, threshold, num_perm) if old else None
    new_lsh = _insert(_table(threshold, num_perm), new)
    out = []
    for key, sig in new.items():
        candidates = set(new_lsh.query(sig))
        if seen_lsh is not None:
            candidates.update(o for o in seen_lsh.query(sig) if o not in new)
        for other in candidates:
            if other == key or (other in new and other < key) or same_doc(key, other):
                continue
            sim = sig.jaccard(index[other])
            if sim >= threshold:
                out.append(DuplicatePair(key, other, sim))
    return sorted(out, key=lambda p: (-p.similarity, p.a, p.b))


def duplicates_of(
    batch: Signatures,
    seen: Signatures | None = None,
    doc_threshold: float = 0.8,
    passage_threshold: float = 0.8,
    num_perm: int = 64,
) -> DedupResult:
    """Near-duplicate document pairs and cross-document passage pairs of a batch, among its own entries
    and against the `seen` signatures of earlier batches (SignatureStore)."""
    seen = seen or Signatures()
    return DedupResult(
        _pairs(batch.documents, seen, "documents", doc_threshold, num_perm, lambda a, b: False),
        _pairs(
            batch.passages,
            seen,
            "passages",
            passage_threshold,
            num_perm,
            lambda a, b: segment_place(a)[0] == segment_place(b)[0],
        ),
    )


def find_duplicates(
    segments_by_doc: dict[str, list[Segment]],
    doc_threshold: float = 0.8,
    passage_threshold: float = 0.8,
    min_shingles: int = 20,
    num_perm: int = 64,
    skip_passage_types: frozenset[BlockType] = frozenset(),
    seen: Signatures | None = None,
) -> DedupResult:
    """`duplicates_of` the batch's signatures.

    Segments with fewer than `min_shingles` shingles (captions, signatures, one-line items) are too
    short to call shared passages; every judgment has a 审判员 line in common. Segments of
    `skip_passage_types` (e.g. the court's standard notices) still count for document similarity.
    """
    batch = signatures(segments_by_doc, min_shingles, num_perm, skip_passage_types)
    return duplicates_of(batch, seen, doc_threshold, passage_threshold, num_perm)


class SignatureStore:
    """The signatures of every document a run has seen, under OUT_DIR/dedup/, so a later batch or a later
    run finds its duplicates among earlier documents.

    `with store.update() as seen:` holds a lock (batches may run side by side), yields what is stored,
    and writes down whatever the caller merged in. Each update writes only what it merged, as a part of
    its own (minhash-<digest>.npz, named by its content, so a rerun rewrites the same part), and a
    process keeps what it has read: the next update reads only the parts other processes (Dask
    workers) wrote meanwhile. Rewriting one file of every signature for each batch made a run's
    dedup cost grow with the square of its corpus. minhash.npz is the one file older runs wrote; it is
    read as a part."""

    def __init__(self, out_dir: str | Path):
        self.path = Path(out_dir) / "dedup" / "minhash.npz"

    def _parts(self) -> list[Path]:
        if not self.path.parent.is_dir():
            return []
        named = list(self.path.parent.glob("minhash-*.npz"))
        return [self.path, *named] if self.path.exists() else named

    def load(self) -> Signatures:
        out = Signatures()
        for part in _in_order(self._parts()):
            _read_part(part, out)
        return out

    @contextmanager
    def update(self) -> Iterator[Signatures]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # filelock opens the lock file with O_NOFOLLOW: a symlink planted there is refused, not truncated
        with _PROCESS_LOCK, FileLock(self.path.with_suffix(".lock")):
            sigs = self._current()
            try:
                yield sigs
                for added in sigs._unsaved:
                    if added.documents or added.passages:
                        _KEPT["parts"].add(_write_part(self.path.parent, added))
                sigs._unsaved.clear()
            except BaseException:
                _KEPT.clear()  # what is kept may hold entries that were never written
                raise

    def _current(self) -> Signatures:
        """What is stored: the kept signatures plus the parts written since, or all of it read anew."""
        parts = self._parts()
        names = {p.name for p in parts}
        if _KEPT.get("dir") != self.path.parent.resolve() or not _KEPT["parts"] <= names:
            _KEPT.clear()
            _KEPT.update(dir=self.path.parent.resolve(), parts=set(), sigs=Signatures())
        sigs = _KEPT["sigs"]
        for part in _in_order([p for p in parts if p.name not in _KEPT["parts"]]):
            sigs.merge(_read_part(part, Signatures()))
            _KEPT["parts"].add(part.name)
        sigs._unsaved.clear()  # read from disk, not to be written again
        return sigs


# The signatures this process read and wrote for one dedup directory (the last one used), and the parts
# they hold; updates in the process take turns on it.
_KEPT: dict = {}
_PROCESS_LOCK = threading.Lock()


def _in_order(parts: list[Path]) -> list[Path]:
    """minhash.npz (an older run's one file) first, then the parts oldest first, so that an id written
    again (after a change of segmentation) takes its latest entry."""
    return sorted(parts, key=lambda p: (p.name != "minhash.npz", p.stat().st_mtime_ns, p.name))


def _read_part(path: Path, out: Signatures) -> Signatures:
    with np.load(path, allow_pickle=False) as z:
        scheme = str(z["scheme"])
        for kind, table in (("documents", out.documents), ("passages", out.passages)):
            hashes = z[f"{kind}_hashes"]
            for key, h in zip(z[f"{kind}_ids"].tolist(), hashes, strict=True):
                table[key] = MinHash(num_perm=hashes.shape[1], seed=1, hashvalues=h, scheme=scheme)
    return out


def _write_part(directory: Path, sigs: Signatures) -> str:
    """Write `sigs` as a part named by its content; returns the name."""
    # the hash scheme of the values, which datasketch needs to rebuild them
    arrays = {"scheme": np.array(next(iter(sigs.documents.values()), MinHash()).scheme)}
    digest = hashlib.sha256()
    for kind, table in (("documents", sigs.documents), ("passages", sigs.passages)):
        arrays[f"{kind}_ids"] = np.array(list(table), dtype=str)
        arrays[f"{kind}_hashes"] = (
            np.stack([m.hashvalues for m in table.values()]) if table else np.zeros((0, 1), dtype=np.uint64)
        )
        digest.update(arrays[f"{kind}_ids"].tobytes() + arrays[f"{kind}_hashes"].tobytes())
    name = f"minhash-{digest.hexdigest()[:16]}.npz"
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write_bytes(directory / name, buf.getvalue())
    return name
