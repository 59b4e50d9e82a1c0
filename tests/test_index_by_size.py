"""The segment store's index follows its size: exact (flat) below `exact_below_keys`, HNSW from there;
HNSW finds the exact neighbours of a small clustered set; restricted searches score their set exactly,
one query at a time or many at once (`search_each`)."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.config import RetrievalConfig
from retrieval.faiss_index import index_kind, wanted_kind
from retrieval.store import SegmentEntry, SegmentStore

DIM = 32


def clustered(n: int, rng: np.random.Generator, clusters: int = 20) -> np.ndarray:
    centres = rng.normal(size=(clusters, DIM))
    x = centres[rng.integers(0, clusters, n)] + 0.6 * rng.normal(size=(n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def entries(start: int, n: int, per_doc: int = 40) -> list[SegmentEntry]:
    return [
        SegmentEntry(f"d{i // per_doc}:{i % per_doc}", f"d{i // per_doc}", i % per_doc, "OTHER")
        for i in range(start, start + n)
    ]


def exact_top(keys: np.ndarray, ids: list[str], q: np.ndarray, k: int) -> list[str]:
    return [ids[i] for i in np.argsort(-(keys @ q), kind="stable")[:k]]


def test_the_kind_follows_the_size_threshold(tmp_path):
    rng = np.random.default_rng(0)
    keys = clustered(400, rng)
    cfg = RetrievalConfig(exact_below_keys=300)
    assert [wanted_kind("auto", n, cfg) for n in (0, 299, 300, 10**6)] == ["flat", "flat", "hnsw", "hnsw"]
    store = SegmentStore.create(tmp_path / "auto", DIM, config=cfg)
    store.add(entries(0, 299), keys[:299])
    assert store.manifest["built"] == "flat" == index_kind(store.index)
    store.add(entries(299, 101), keys[299:])
    assert store.manifest["built"] == "hnsw" == index_kind(store.index)
    store.commit()
    again = SegmentStore.open(tmp_path / "auto", config=cfg)
    assert index_kind(again.index) == "hnsw" and len(again) == 400
    ids = [e.segment_id for e in entries(0, 400)]
    np.testing.assert_array_equal(again.keys(ids), keys)
    # a store made flat (as every store before "auto" was) stays flat and exact past the threshold
    flat = SegmentStore.create(tmp_path / "flat", DIM, config=RetrievalConfig(index_type="flat"))
    flat.add(entries(0, 400), keys)
    flat.commit()
    reopened = SegmentStore.open(tmp_path / "flat", config=cfg)
    reopened.add(entries(400, 1), keys[:1])
    assert reopened.manifest["built"] == "flat" == index_kind(reopened.index)
    assert [s for s, _ in reopened.search(keys[7], 5)[0]][:1] in (["d0:7"], ["d10:0"])  # d10:0 is a copy


def _hnsw_store(path, n: int, exact_below: int, rng):
    """A store of n clustered keys past its exact threshold (so HNSW) -> (store, keys, segment ids)."""
    keys = clustered(n, rng)
    store = SegmentStore.create(path, DIM, config=RetrievalConfig(exact_below_keys=exact_below))
    store.add(entries(0, n), keys)
    return store, keys, [e.segment_id for e in entries(0, n)]


def test_hnsw_finds_the_exact_neighbours_of_a_clustered_set(tmp_path):
    rng = np.random.default_rng(1)
    store, keys, ids = _hnsw_store(tmp_path / "i", 3000, 1000, rng)
    assert store.manifest["built"] == "hnsw"
    queries = keys[rng.integers(0, 3000, 100)] + 0.05 * rng.normal(size=(100, DIM)).astype(np.float32)
    found = store.search(queries, 10)
    recall = np.mean(
        [
            len({s for s, _ in hits} & set(exact_top(keys, ids, q, 10))) / 10
            for q, hits in zip(queries, found, strict=True)
        ]
    )
    assert recall >= 0.98


def test_restricted_hnsw_search_is_exact_and_batched_equals_alone(tmp_path):
    rng = np.random.default_rng(2)
    store, keys, ids = _hnsw_store(tmp_path / "i", 2000, 500, rng)
    queries = clustered(8, rng)
    # each query among one document's segments (injection's sets), one set empty
    sets = [set(ids[40 * j : 40 * j + 25]) for j in range(7)] + [set()]
    alone = [store.search(q, 3, only=s)[0] for q, s in zip(queries, sets, strict=True)]
    assert store.search_each(queries, 3, sets) == alone
    for q, s, hits in zip(queries, sets, alone, strict=True):
        members = sorted(s, key=ids.index)
        want = exact_top(keys[[ids.index(m) for m in members]], members, q, 3) if s else []
        assert [sid for sid, _ in hits] == want


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_deleting_a_document_takes_its_keys_out(tmp_path, kind):
    rng = np.random.default_rng(3)
    keys = clustered(600, rng)
    store = SegmentStore.create(tmp_path / kind, DIM, config=RetrievalConfig(index_type=kind))
    store.add(entries(0, 600), keys)
    assert store.delete_document("d3") == 40
    assert store.entries("d3") == [] and len(store.entries("d4")) == 40
    assert not any(s.startswith("d3:") for s, _ in store.search(keys[3 * 40 + 5], 10)[0])
    store.commit()
    assert len(SegmentStore.open(tmp_path / kind)) == 560
