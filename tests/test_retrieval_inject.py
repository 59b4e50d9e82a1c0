"""Memory injection with a tiny randomly initialised Transformer-XL over a real judgment's segments."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import torch
from tiny_models import tiny_encoder

from pipeline.records import BLOCK_TYPE_IDS, BlockType, Segment
from pipeline.tokenizer import encode_segment, load_tokenizer
from retrieval.config import RetrievalConfig
from retrieval.inject import DocInput, encode_document, encode_documents, encode_stream, retrieved_inputs
from retrieval.stages import WAITING
from retrieval.store import SegmentStore

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _segments(text: str, doc_id: str, max_chars: int = 60) -> list[Segment]:
    """Fixed-width character windows of a real text, typed FACTS (the segmenter is not under test here)."""
    out = []
    for i, start in enumerate(range(0, min(len(text), 12 * max_chars), max_chars)):
        piece = text[start : start + max_chars]
        out.append(Segment(doc_id, i, 0, BlockType.FACTS, piece, 0, start, start + len(piece)))
    return out


@pytest.fixture(scope="module")
def judgment(shared_data):
    tok = load_tokenizer()
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = [json.loads(next(f))["fd"], json.loads(next(f))["fd"]]
    segs = [_segments(d, f"doc{i}") for i, d in enumerate(docs)]
    ids = [[encode_segment(s, tok)[0] for s in doc] for doc in segs]
    model = tiny_encoder(tok, mem_len=64, clamp_len=200)
    with torch.no_grad():  # a random, non-zero retrieved-key bias so the slots visibly matter
        for blk in model.layers:
            if hasattr(blk.attn, "retrieved_bias"):
                blk.attn.retrieved_bias.normal_(0, 1.0)
    return model, segs, ids


def _store(tmp_path, model, name="ix", layers=None, **cfg):
    """A store of every layer's states, or of `layers` only."""
    c = model.cfg
    config = RetrievalConfig(**{"states_per_layer": 16, **cfg})  # a small P keeps the tiny tests quick
    return SegmentStore.create(
        tmp_path / name,
        dim=c.d_model,
        state_shape=(len(layers) if layers else c.n_layer, config.states_per_layer, c.d_model),
        config=config,
        state_layers=layers,
    )


@pytest.mark.parametrize("layers", [None, (1,)])
def test_injection_changes_outputs_only_through_retrieved_slots(tmp_path, judgment, layers):
    model, segs, ids = judgment
    plain = encode_document(model, segs[0], ids[0])  # no store: plain recurrence (packed segments)
    store = _store(tmp_path, model, inject_k=2, layers=layers)
    injected = encode_document(model, segs[0], ids[0], store, RetrievalConfig(inject_k=2))
    first = next(i for i, e in enumerate(injected) if e.retrieved)
    assert first >= 2  # nothing is injected while every earlier segment is still in memory
    for p, e in zip(plain[:first], injected[:first], strict=True):
        torch.testing.assert_close(p.hidden, e.hidden, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(plain[first].hidden, injected[first].hidden)
    # every injected segment left memory before: its tokens are older than mem_len
    done = [len(x) for x in ids[0]]
    for n, e in enumerate(injected):
        for sid in e.retrieved:
            j = int(sid.split(":")[1])
            assert sid.startswith("doc0:") and sum(done[j + 1 : n]) >= model.cfg.mem_len

    # the slots came from the store's layers and only those layers read them
    if layers:
        stored = retrieved_inputs(store, injected[first].retrieved, torch.device("cpu"))
        assert stored.layers == layers and len(stored.states) == len(layers)
    # the same call with every retrieved slot masked out equals the plain model
    with torch.no_grad():
        memory = None
        for i in range(first + 1):
            x = torch.tensor([ids[0][i]])
            retrieved = None
            if i == first:
                retrieved = retrieved_inputs(store, injected[first].retrieved, x.device)
                retrieved.mask = torch.zeros_like(retrieved.mask)
            out = model(x, memory, retrieved, block_types=torch.full_like(x, BLOCK_TYPE_IDS[BlockType.FACTS]))
            memory = out.memory
    torch.testing.assert_close(out.hidden[0], plain[first].hidden, rtol=1e-5, atol=1e-5)


def test_cross_document_injection_reaches_other_documents(tmp_path, judgment):
    model, segs, ids = judgment
    cfg = RetrievalConfig(inject_k=3, inject_cross_document=True)
    store = _store(tmp_path, model, inject_k=3, inject_cross_document=True)
    encode_document(model, segs[0], ids[0], store, cfg)
    second = encode_document(model, segs[1], ids[1], store, cfg)
    picked = [sid for e in second for sid in e.retrieved]
    assert any(s.startswith("doc0:") for s in picked)
    assert not second[0].retrieved  # the first segment has no query yet
    store.commit()
    back = SegmentStore.open(tmp_path / "ix")
    assert len(back) == len(segs[0]) + len(segs[1])
    states, mask = back.states([segs[1][3].segment_id])
    assert states.shape == (1, 2, 16, 32) and mask.any()
    assert np.isfinite(states.astype(np.float32)).all()


def test_anchoring_resets_memory_before_segments_after_the_second(judgment):
    model, segs, ids = judgment
    cfg = RetrievalConfig(anchoring=True, anchoring_threshold=1.01)  # every segment that can reset does
    anchored = encode_document(model, segs[0][:4], ids[0][:4], None, cfg)
    assert [e.reset for e in anchored] == [False, False, True, True]
    alone = encode_document(model, segs[0][3:4], ids[0][3:4])  # segment 3 with empty memory
    torch.testing.assert_close(anchored[3].hidden, alone[0].hidden, rtol=1e-5, atol=1e-5)
    plain = encode_document(model, segs[0][:4], ids[0][:4])
    torch.testing.assert_close(anchored[1].hidden, plain[1].hidden, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(plain[3].hidden, anchored[3].hidden)
    never = encode_document(
        model, segs[0][:4], ids[0][:4], None, RetrievalConfig(anchoring=True, anchoring_threshold=-1.01)
    )
    assert not any(e.reset for e in never)
    for a, b in zip(plain, never, strict=True):
        torch.testing.assert_close(a.hidden, b.hidden, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def real_documents(shared_data, tmp_path_factory):
    """Five real judgments as the segmenter cuts them: segments of very different lengths."""
    from flows.config import LdxConfig
    from pipeline import segment
    from pipeline.parsing import iter_documents

    tok, cfg = load_tokenizer(), LdxConfig()
    path = tmp_path_factory.mktemp("judgments") / "five.jsonl"
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        path.write_text("".join(json.dumps({"text": json.loads(next(f))["fd"]}) + "\n" for _ in range(5)))
    docs = []
    for doc in iter_documents(path, cfg.parse, errors=[]):
        docs.append(DocInput.encoded(segment(doc, cfg.segment)[:14], tok))
    return docs


@pytest.fixture(scope="module")
def drift_threshold(judgment, real_documents) -> float:
    """A threshold that resets some segments of the real documents and not others with the tiny model:
    the median cosine of each segment's key (plain encoding) with its document's opening key."""
    encoded = encode_documents(judgment[0], real_documents)
    return float(np.median([e.key @ doc[0].key for doc in encoded for e in doc[1:-1]]))


def _anchoring(on: bool, threshold: float) -> dict:
    return {"anchoring": on, "anchoring_threshold": threshold}


def _some_reset(on: bool, encoded: list[list]) -> None:
    """With anchoring on, the equivalence must have been tested across resets and across segments
    without one."""
    flags = [e.reset for doc in encoded for e in doc[2:]]
    assert (any(flags) and not all(flags)) if on else not any(flags)


@pytest.mark.parametrize(("anchored", "layers"), [(False, None), (True, None), (False, (1,))])
def test_batched_documents_equal_each_encoded_alone(
    tmp_path, judgment, real_documents, anchored, layers, drift_threshold
):
    model = judgment[0]
    cfg = RetrievalConfig(
        inject_k=2, encode_lanes=4, encode_window=5, **_anchoring(anchored, drift_threshold)
    )
    assert len({len(ids) for d in real_documents for ids in d.token_ids}) > 5  # ragged for real
    batched_store = _store(tmp_path, model, "batched", layers, inject_k=2)
    batched = encode_documents(model, real_documents, batched_store, cfg)
    _some_reset(anchored, batched)
    for n, doc in enumerate(real_documents):
        alone_store = _store(tmp_path, model, f"alone{n}", layers, inject_k=2)
        alone = encode_document(model, doc.segments, doc.token_ids, alone_store, cfg, doc.connective_masks)
        assert [e.segment_id for e in batched[n]] == [s.segment_id for s in doc.segments]
        assert [e.reset for e in batched[n]] == [e.reset for e in alone]
        assert [e.retrieved for e in batched[n]] == [e.retrieved for e in alone]
        assert any(e.retrieved for e in alone)  # injection took part
        for a, b in zip(alone, batched[n], strict=True):
            torch.testing.assert_close(b.hidden, a.hidden, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(b.key, a.key, rtol=1e-4, atol=1e-5)
        ids = [s.segment_id for s in doc.segments]
        np.testing.assert_allclose(
            batched_store.states(ids)[0].astype(np.float32),
            alone_store.states(ids)[0].astype(np.float32),
            atol=2e-3,
        )


def test_lane_picker_groups_similar_lengths():
    from retrieval.lanes import bucket as _bucket

    lengths = [3, 9, 16, 17, 20, 25, 31, 33, 200, 250, 384]
    assert [_bucket(n) for n in lengths] == [12, 12, 12, 12, 13, 14, 15, 15, 23, 24, 26]


@pytest.mark.parametrize("anchored", [False, True])
def test_a_shared_prefix_is_encoded_once_and_equals_encoding_it_again(
    tmp_path, judgment, real_documents, anchored, drift_threshold
):
    """Document B repeats A's first eight segments, then goes on as C: B's prefix is reused from A's,
    and every output (states, injected segments, store entries) equals B encoded alone."""
    from dataclasses import replace

    model = judgment[0]
    a, c = real_documents[0], real_documents[1]
    segs = [replace(s, doc_id="dupB", seg_idx=i) for i, s in enumerate(a.segments[:8] + c.segments[:6])]
    b = DocInput(segs, a.token_ids[:8] + c.token_ids[:6], a.connective_masks[:8] + c.connective_masks[:6])
    cfg = RetrievalConfig(inject_k=2, **_anchoring(anchored, drift_threshold))
    stats: dict = {}
    store = _store(tmp_path, model, f"shared{anchored}", inject_k=2)
    together = dict(encode_stream(model, [a, b, c], store, cfg, stats))
    _some_reset(anchored, [together[0], together[1]])
    assert stats["reused_segments"] == 8
    assert stats["encoded_segments"] == sum(len(d.segments) for d in (a, b, c)) - 8
    alone_store = _store(tmp_path, model, f"alone_b{anchored}", inject_k=2)
    alone = encode_document(model, b.segments, b.token_ids, alone_store, cfg, b.connective_masks)
    assert [e.retrieved for e in together[1]] == [e.retrieved for e in alone]
    assert [e.reset for e in together[1]] == [e.reset for e in alone]
    for x, y in zip(together[1], alone, strict=True):
        assert x.segment_id == y.segment_id
        torch.testing.assert_close(x.hidden, y.hidden, rtol=1e-4, atol=1e-5)
    ids = [s.segment_id for s in b.segments]
    np.testing.assert_allclose(
        store.states(ids)[0].astype(np.float32), alone_store.states(ids)[0].astype(np.float32), atol=2e-3
    )
    off = {}
    list(encode_stream(model, [a, b], None, RetrievalConfig(reuse_prefixes=False, encode_pack_tokens=0), off))
    assert off["reused_segments"] == 0


def test_a_pack_that_a_reset_cut_is_reused_up_to_the_reset(judgment, real_documents, drift_threshold):
    """Without a store every segment may be packed: a shared prefix whose pack a reset cut is reused up to
    the reset, and the document equals itself encoded alone."""
    from dataclasses import replace

    model = judgment[0]
    a, c = real_documents[0], real_documents[1]
    segs = [replace(s, doc_id="dupB", seg_idx=i) for i, s in enumerate(a.segments[:8] + c.segments[:6])]
    b = DocInput(segs, a.token_ids[:8] + c.token_ids[:6], a.connective_masks[:8] + c.connective_masks[:6])
    cfg = RetrievalConfig(**_anchoring(True, drift_threshold))
    stats: dict = {}
    together = dict(encode_stream(model, [a, b, c], None, cfg, stats))
    alone = encode_document(model, b.segments, b.token_ids, None, cfg, b.connective_masks)
    assert any(e.reset for e in alone[:8])  # the shared prefix holds a reset
    assert stats["reused_segments"] > 0
    assert stats["encoded_segments"] + stats["reused_segments"] == sum(len(d.segments) for d in (a, b, c))
    assert [e.reset for e in together[1]] == [e.reset for e in alone]
    for x, y in zip(together[1], alone, strict=True):
        torch.testing.assert_close(x.hidden, y.hidden, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("anchored", [False, True])
def test_packed_segments_equal_one_segment_per_call(judgment, real_documents, anchored, drift_threshold):
    """Without a store, consecutive segments share a forward call: the same states in fewer calls (with
    anchoring too: a pack that a reset cuts is encoded again from the reset on)."""
    model = judgment[0]
    anchoring = _anchoring(anchored, drift_threshold)
    calls = []
    hook = model.register_forward_hook(lambda *_: calls.append(1))
    try:
        one = encode_documents(
            model,
            real_documents,
            None,
            RetrievalConfig(encode_pack_tokens=0, reuse_prefixes=False, **anchoring),
        )
        n_one = len(calls)
        packed = encode_documents(model, real_documents, None, RetrievalConfig(**anchoring))
    finally:
        hook.remove()
    # half the segments reset under the median threshold, and each cut pack is stepped again
    assert len(calls) - n_one < (0.9 if anchored else 0.7) * n_one
    _some_reset(anchored, one)
    for a, b in zip(one, packed, strict=True):
        assert [e.segment_id for e in a] == [e.segment_id for e in b]
        assert [e.reset for e in a] == [e.reset for e in b]
        for x, y in zip(a, b, strict=True):
            torch.testing.assert_close(y.hidden, x.hidden, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(y.key, x.key, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("anchored", [False, True])
def test_packing_beside_injection_changes_only_the_number_of_calls(
    tmp_path, judgment, real_documents, anchored, drift_threshold
):
    """With a store, a document's opening segments (nothing can be injected yet) share calls; the states,
    injected segments and stored states equal one call per segment."""
    model = judgment[0]
    anchoring = _anchoring(anchored, drift_threshold)
    runs = {}
    for pack in (0, 128):
        calls = []
        hook = model.register_forward_hook(lambda *_, calls=calls: calls.append(1))
        store = _store(tmp_path, model, f"pack{pack}", inject_k=2)
        try:
            out = encode_documents(
                model,
                real_documents,
                store,
                RetrievalConfig(inject_k=2, encode_pack_tokens=pack, **anchoring),
            )
        finally:
            hook.remove()
        runs[pack] = (out, store, len(calls))
    (one, one_store, one_calls), (packed, packed_store, packed_calls) = runs[0], runs[128]
    assert packed_calls < one_calls
    _some_reset(anchored, one)
    for a, b in zip(one, packed, strict=True):
        assert [e.retrieved for e in a] == [e.retrieved for e in b] and any(e.retrieved for e in a)
        assert [e.reset for e in a] == [e.reset for e in b]
        for x, y in zip(a, b, strict=True):
            torch.testing.assert_close(y.hidden, x.hidden, rtol=1e-4, atol=1e-5)
    ids = [s.segment_id for d in real_documents for s in d.segments]
    np.testing.assert_allclose(
        packed_store.states(ids)[0].astype(np.float32), one_store.states(ids)[0].astype(np.float32), atol=2e-3
    )


def test_a_pack_ends_at_its_budget():
    from retrieval.lanes import Lane

    segs = [Segment("d", i, 0, BlockType.FACTS, "", 0, 0, 0) for i in range(6)]
    lane = Lane(0, DocInput(segs, [[1] * n for n in (4, 3, 3, 9, 2, 2)]), None, pack_tokens=10)
    spans = []
    while not lane.done:
        spans.append(lane.next_span())
        lane.pos = spans[-1][0]
    assert spans == [(3, 10), (4, 9), (6, 4)]


def test_a_live_source_may_say_nothing_is_ready(judgment, real_documents):
    """Waiting entries (a feed with nothing ready) neither stall the stream nor change any result."""
    model = judgment[0]
    docs = real_documents[:3]
    plain = dict(encode_stream(model, docs))
    live = dict(encode_stream(model, [WAITING, docs[0], WAITING, WAITING, docs[1], docs[2], WAITING]))
    assert sorted(live) == [1, 4, 5]
    for i, j in zip((0, 1, 2), (1, 4, 5), strict=True):
        for a, b in zip(plain[i], live[j], strict=True):
            torch.testing.assert_close(a.hidden, b.hidden, rtol=1e-5, atol=1e-5)


def test_keys_alone_give_the_same_keys_injections_and_store(tmp_path, judgment, real_documents):
    """The index stage's way (`keep_hidden=False`): no segment keeps its hidden states, and the keys,
    the injected segments and what the store holds are those of the stream that keeps them."""
    model = judgment[0]
    docs = real_documents[:3]
    cfg = RetrievalConfig(inject_k=2)
    kept_store, bare_store = (
        _store(tmp_path, model, "kept", inject_k=2),
        _store(tmp_path, model, "bare", inject_k=2),
    )
    kept = dict(encode_stream(model, docs, kept_store, cfg))
    bare = dict(encode_stream(model, docs, bare_store, cfg, keep_hidden=False))
    for i in range(len(docs)):
        assert all(e.hidden is None for e in bare[i]) and all(e.hidden is not None for e in kept[i])
        assert [e.retrieved for e in bare[i]] == [e.retrieved for e in kept[i]]
        np.testing.assert_array_equal(np.stack([e.key for e in bare[i]]), np.stack([e.key for e in kept[i]]))
    ids = [s.segment_id for d in docs for s in d.segments]
    np.testing.assert_array_equal(bare_store.states(ids)[0], kept_store.states(ids)[0])
