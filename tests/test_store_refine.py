"""IVF-PQ with exact re-ranking: recall against exact search, delete by document, persistence."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from retrieval.config import RetrievalConfig
from retrieval.faiss_index import IVFPQ_MIN_TRAIN
from retrieval.store import SegmentEntry, SegmentStore

N_KEYS = IVFPQ_MIN_TRAIN + 16  # just enough for the store to train its IVF-PQ codebooks
PER_DOC = 20


@pytest.fixture(scope="module")
def contract_keys(shared_data) -> np.ndarray:
    """Keys around real sentence-model vectors: 200 clause lines of CUAD contracts, each with 50 noisy
    copies (near-duplicate clauses are common in contracts, and hardest for PQ codes to tell apart)."""
    from retrieval.sentence import embed

    lines: list[str] = []
    with gzip.open(shared_data / "en/contracts/cuad_contracts.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            lines += [
                ln.strip()[:120] for ln in json.loads(line)["text"].splitlines() if len(ln.strip()) > 60
            ]
            if len(lines) >= 200:
                break
    seeds = embed(lines[:200])
    rng = np.random.default_rng(0)
    keys = seeds[np.arange(N_KEYS) % len(seeds)] + 0.02 * rng.normal(size=(N_KEYS, seeds.shape[1]))
    return (keys / np.linalg.norm(keys, axis=1, keepdims=True)).astype(np.float32)


def _entries(n: int) -> list[SegmentEntry]:
    return [
        SegmentEntry(f"d{i // PER_DOC}:{i % PER_DOC}", f"d{i // PER_DOC}", i % PER_DOC, "OTHER")
        for i in range(n)
    ]


def _recall(store: SegmentStore, keys: np.ndarray, queries: np.ndarray, names: list[str]) -> float:
    exact = np.argsort(-(queries @ keys.T), axis=1)[:, :10]
    found = store.search(queries, 10)
    return float(
        np.mean(
            [len({names[j] for j in e} & {s for s, _ in f}) / 10 for e, f in zip(exact, found, strict=True)]
        )
    )


def test_refine_beats_pq_codes_and_survives_delete_and_reopen(contract_keys, tmp_path):
    cfg = RetrievalConfig(index_type="ivfpq", ivf_nlist=64, ivf_nprobe=16, pq_m=16, ivf_refine_k_factor=8)
    store = SegmentStore.create(tmp_path / "ix", contract_keys.shape[1], config=cfg)
    entries = _entries(len(contract_keys))
    store.add(entries[:4000], contract_keys[:4000])  # still flat: too few keys to train on
    assert store.manifest["built"] == "flat"
    store.add(entries[4000:], contract_keys[4000:])
    store.commit()
    assert store.manifest["built"] == "ivfpq" and store.manifest["refine"]

    rng = np.random.default_rng(1)
    queries = contract_keys[rng.integers(0, len(contract_keys), 100)] + 0.02 * rng.normal(size=(100, 384))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    names = [e.segment_id for e in entries]
    refined = _recall(store, contract_keys, queries, names)
    store.config = cfg.model_copy(update={"ivf_refine_k_factor": 0})
    plain = _recall(store, contract_keys, queries, names)
    print(f"recall@10 vs exact: refine {refined:.3f}, PQ codes alone {plain:.3f}")
    assert refined >= 0.9 and refined > plain + 0.1, (refined, plain)
    store.config = cfg

    # delete in place: every remaining key still finds itself first, the deleted ones are gone
    gone = {f"d{d}" for d in range(0, 500, 7)}
    for doc in gone:
        store.delete_document(doc)
    store.commit()
    back = SegmentStore.open(tmp_path / "ix", mmap=True, config=cfg)
    live = [i for i, e in enumerate(entries) if e.doc_id not in gone]
    assert len(back) == back.index.ntotal == back.refine.ntotal == len(live)
    probe = live[::97]
    hits = back.search(contract_keys[probe], 10)
    assert [h[0][0] for h in hits] == [names[i] for i in probe]
    assert not {s for h in hits for s, _ in h} & {n for n in names if n.split(":")[0] in gone}
    np.testing.assert_array_equal(back.keys([names[probe[0]]])[0], contract_keys[probe[0]])

    # a restricted search (injection: a few segments of one document) ranks all of them exactly
    doc = [names[i] for i in live[:PER_DOC]]
    q = contract_keys[live[500]]
    got = back.search(q, 5, only=set(doc))[0]
    want = sorted(doc, key=lambda s: -float(contract_keys[names.index(s)] @ q))[:5]
    assert [s for s, _ in got] == want
