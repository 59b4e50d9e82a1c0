"""The segment-state store: consistency after add/delete, persistence, compact states and their size."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.config import RetrievalConfig
from retrieval.eval.search import split_passages
from retrieval.store import SegmentEntry, SegmentStore, StoreError
from txl.pooling import pool_key, pool_states
from txl.retrieved import layer_indices


@pytest.fixture(scope="module")
def contract_passages(shared_data):
    """Passages of three real CUAD contracts, with their MiniLM vectors."""
    from retrieval.sentence import embed

    passages = []
    with gzip.open(shared_data / "en/contracts/cuad_contracts.jsonl.gz", "rt", encoding="utf-8") as f:
        for n, line in zip(range(3), f, strict=False):
            passages += split_passages(f"doc{n}", "", json.loads(line)["text"], 600)[:6]
    return passages, embed([p.text for p in passages])


def _entries(passages):
    return [SegmentEntry(p.segment_id, p.doc_id, int(p.segment_id.split(":")[1]), "CLAUSE") for p in passages]


def test_add_delete_persist_and_mmap_round_trip(tmp_path, contract_passages):
    passages, vecs = contract_passages
    store = SegmentStore.create(tmp_path / "index", dim=vecs.shape[1])
    store.add(_entries(passages), vecs)
    store.commit()
    hits = store.search(vecs[5], k=3)[0]
    assert hits[0][0] == passages[5].segment_id and hits[0][1] == pytest.approx(1.0, abs=1e-5)

    removed = store.delete_document("doc1")
    assert removed == 6
    store.commit()
    reopened = SegmentStore.open(tmp_path / "index", mmap=True)
    assert len(reopened) == reopened.index.ntotal == 12
    assert {r["doc_id"] for r in reopened.entries()} == {"doc0", "doc2"}
    for i in (0, 7, 15):  # doc0, doc1 (deleted), doc2
        top = reopened.search(vecs[i], k=1)[0][0][0]
        assert (top == passages[i].segment_id) == (passages[i].doc_id != "doc1")
    # restricted search only returns allowed segments
    only = {p.segment_id for p in passages if p.doc_id == "doc2"}
    assert {s for s, _ in reopened.search(vecs[0], k=5, only=only)[0]} <= only
    with pytest.raises(StoreError):
        reopened.add(_entries(passages[:1]), vecs[:1])
    # only one generation's files are left behind
    assert len(list((tmp_path / "index").glob("keys-*.faiss"))) == 1


def test_uncommitted_changes_are_invisible_and_damage_is_reported(tmp_path, contract_passages):
    passages, vecs = contract_passages
    store = SegmentStore.create(tmp_path / "ix", dim=vecs.shape[1])
    store.add(_entries(passages[:5]), vecs[:5])
    store.commit()
    store.add(_entries(passages[5:]), vecs[5:])  # not committed
    assert len(SegmentStore.open(tmp_path / "ix")) == 5
    (tmp_path / "ix" / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(StoreError, match="manifest.json"):
        SegmentStore.open(tmp_path / "ix")
    with pytest.raises(StoreError, match="no index"):
        SegmentStore.open(tmp_path / "nowhere")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 4)), min_size=1, max_size=12),
    st.sampled_from(["flat", "hnsw"]),
)
def test_index_and_metadata_agree_after_any_add_delete_sequence(tmp_path_factory, ops, kind):
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("prop")
    store = SegmentStore.create(root, dim=8, config=RetrievalConfig(index_type=kind))
    live: set[str] = set()
    for add, doc in ops:
        if add:
            entries = [SegmentEntry(f"d{doc}:{i}", f"d{doc}", i, "OTHER") for i in range(3)]
            keys = rng.normal(size=(3, 8)).astype(np.float32)
            store.add(entries, keys / np.linalg.norm(keys, axis=1, keepdims=True))
            live |= {e.segment_id for e in entries}
        else:
            store.delete_document(f"d{doc}")
            live = {s for s in live if not s.startswith(f"d{doc}:")}
        store.commit()
    back = SegmentStore.open(root)
    assert {r["segment_id"] for r in back.entries()} == live
    assert back.index.ntotal == len(live)
    if live:
        sid = sorted(live)[0]
        assert back.search(back.keys([sid]), k=1)[0][0][0] == sid


def test_compact_states_round_trip_and_size_at_default_config(tmp_path):
    from txl.model import TransformerXLConfig

    mcfg, rcfg = TransformerXLConfig(n_layer=4, d_model=256), RetrievalConfig()  # the shipped model's shape
    layers = layer_indices(rcfg.state_layers, mcfg.n_layer)
    assert layers == (2,)  # the layer that reads retrieved memory, from the top: -2
    shape = (len(layers), rcfg.states_per_layer, mcfg.d_model)
    rng = np.random.default_rng(1)
    full = [rng.normal(size=(len(layers), t, mcfg.d_model)).astype(np.float32) for t in (384, 128, 5)]
    pooled = [pool_states(s, rcfg.states_per_layer) for s in full]
    assert [p.shape[1] for p in pooled] == [128, 128, 5]
    np.testing.assert_allclose(pooled[0][:, 0], full[0][:, :3].mean(1), rtol=1e-5)  # 384 / 128 = 3 per run
    np.testing.assert_array_equal(pooled[1], full[1])  # a whole window is kept as it is
    keys = np.stack([pool_key(s[-1]) for s in full])
    store = SegmentStore.create(tmp_path / "ix", dim=mcfg.d_model, state_shape=shape, state_layers=layers)
    store.add([SegmentEntry(f"d:{i}", "d", i, "FACTS") for i in range(3)], keys, pooled)
    store.commit()
    back = SegmentStore.open(tmp_path / "ix", mmap=True)
    assert back.state_layers == (2,)
    states, mask = back.states(["d:2", "d:0"])
    assert states.dtype == np.float16 and mask.sum(1).tolist() == [5, 128]
    np.testing.assert_allclose(states[1].astype(np.float32), pooled[0], atol=2e-3)
    assert back.state_bytes_per_segment == 64 * 1024
    assert (tmp_path / "ix" / "states.f16").stat().st_size == 3 * back.state_bytes_per_segment


def test_added_states_read_back_before_during_and_after_their_write(tmp_path, monkeypatch):
    """States wait in memory until commit (or a full buffer, then reused); reads see them the same either way,
    and an uncommitted slot never reaches a reopened store."""
    import retrieval.store as store_module

    shape, rng = (2, 4, 8), np.random.default_rng(3)
    monkeypatch.setattr(store_module, "PENDING_BYTES", 3 * int(np.prod(shape)) * 2)  # three slots
    store = SegmentStore.create(tmp_path / "ix", dim=8, state_shape=shape)
    states = [rng.normal(size=(2, n, 8)).astype(np.float32) for n in (4, 2, 3, 4, 1)]
    keys = np.stack([pool_key(s[-1]) for s in states])
    for i in range(5):
        store.add([SegmentEntry(f"d:{i}", "d", i, "FACTS")], keys[i : i + 1], states[i : i + 1])
        got, mask = store.states([f"d:{j}" for j in range(i + 1)])
        for j in range(i + 1):
            np.testing.assert_allclose(
                got[j, :, : states[j].shape[1]].astype(np.float32), states[j], atol=5e-3
            )
            assert mask[j].sum() == states[j].shape[1]
            assert not got[j, :, states[j].shape[1] :].any()  # a reused buffer row holds nothing stale
    assert (
        tmp_path / "ix" / "states.f16"
    ).stat().st_size == 3 * store.state_bytes_per_segment  # one full buffer
    store.commit()
    store.add([SegmentEntry("e:0", "e", 0, "FACTS")], keys[:1], states[:1])  # never committed
    back = SegmentStore.open(tmp_path / "ix", mmap=True)
    assert len(back) == 5 and back.manifest["n_slots"] == 5
    np.testing.assert_allclose(back.states(["d:4"])[0][0, :, :1].astype(np.float32), states[4], atol=5e-3)
