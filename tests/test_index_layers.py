"""The index stage runs only the shipped model's layers below those whose inputs it keeps (keys of
layer 0, stored states of layer 2): what it stores equals what the whole model, injection on, gives."""

from __future__ import annotations

import gzip
import itertools
import json

import numpy as np
import pytest

from pipeline.paths import SHIPPED_CHECKPOINT
from retrieval.config import RetrievalConfig
from retrieval.encoder import load_encoder
from retrieval.inject import DocInput, encode_documents
from retrieval.stage import INDEX_DIR, index_layers, index_segments, open_or_create
from retrieval.store import SegmentStore

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def judgments(shared_data, tmp_path_factory):
    """Four real criminal judgments as `ldx run` parses and segments them, cut to 16 segments each."""
    from flows.config import LdxConfig
    from pipeline import segment
    from pipeline.parsing import iter_documents

    cfg = LdxConfig()
    path = tmp_path_factory.mktemp("judgments") / "four.jsonl"
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line)["fd"] for line in itertools.islice(f, 4)]
    path.write_text("".join(json.dumps({"text": r}, ensure_ascii=False) + "\n" for r in rows))
    return [segment(doc, cfg.segment)[:16] for doc in iter_documents(path, cfg.parse, errors=[])]


@pytest.fixture(scope="module")
def shipped():
    return load_encoder(SHIPPED_CHECKPOINT, "cpu")


def _stored(store: SegmentStore) -> tuple[list[str], np.ndarray, np.ndarray]:
    ids = sorted(r["segment_id"] for r in store.entries())
    return ids, store.keys(ids), store.states(ids)[0].astype(np.float32)


@pytest.mark.parametrize(("state_layers", "runs"), [([-2], 2), ([0], 0)])
def test_the_index_stores_what_the_whole_model_with_injection_gives(
    tmp_path, judgments, shipped, state_layers, runs
):
    """The shipped layout (layer 2's states: layers 0 and 1 run), and layer 0's (no layer runs)."""
    model, tokenizer = shipped
    cfg = RetrievalConfig(sentence_model=False, state_layers=state_layers)
    counts = index_segments(tmp_path / "cut", judgments, model, tokenizer, cfg)
    cut = SegmentStore.open(tmp_path / "cut" / INDEX_DIR)
    assert index_layers(model, cut) == runs

    whole = open_or_create(tmp_path / "whole", model, cfg)
    docs = [DocInput.encoded(segs, tokenizer) for segs in judgments]
    encoded = encode_documents(model, docs, whole, cfg)
    assert any(e.retrieved for doc in encoded for e in doc)  # the whole model's run did inject
    whole.commit()

    a, b = _stored(cut), _stored(whole)
    assert a[0] == b[0] and counts["indexed_segments"] == len(a[0]) == sum(map(len, judgments))
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a[2], b[2], rtol=2e-3, atol=2e-3)  # fp16 states: one rounding step at most


def test_the_layers_run_are_those_below_the_highest_input_kept(tmp_path, shipped):
    model, _ = shipped
    top = open_or_create(tmp_path / "top", model, RetrievalConfig(state_layers=[-1]))
    assert index_layers(model, top) == 3  # the last layer's input
    raw, _ = load_encoder(SHIPPED_CHECKPOINT, "cpu", "raw")  # raw keys pool the last layer's output
    assert index_layers(raw, open_or_create(tmp_path / "raw", raw, RetrievalConfig())) is None
