"""Document-ordered streams: lanes read documents in order, every window once per epoch, memory reset
at document changes (checked through the model)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from txl.corpora import LMCorpus, encode_corpus
from txl.streams import IGNORE, EncodedDoc, LaneStream, load_corpus, save_corpus

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def real_docs(shared_data):
    """Eight real criminal judgments, parsed, segmented and tokenized by the pipeline."""
    from pipeline.tokenizer import load_tokenizer

    corpus = LMCorpus("zh_criminal", "zh/judgments/judge_criminal.jsonl.gz", text_field="fd")
    docs, held, errors = encode_corpus(corpus, shared_data, load_tokenizer(), 0.05, 0, max_docs=8)
    assert len(docs) == 8 and not errors
    return docs


def _walk(stream: LaneStream, n_batches: int):
    """Per lane, the (epoch, doc, window, new_doc) sequence, checking batch contents on the way."""
    seen = [[] for _ in range(stream.n_lanes)]
    for _ in range(n_batches):
        b = stream.next_batch()
        for k in range(stream.n_lanes):
            d, w = int(b.doc[k]), int(b.window[k])
            seen[k].append((int(b.epoch[k]), d, w, bool(b.new_doc[k])))
            if d < 0:
                continue
            ids = stream.docs[d].ids
            s, n = w * stream.seg_len, int((b.targets[k] != IGNORE).sum())
            assert b.input_ids[k, :n].tolist() == ids[s : s + n].tolist()
            assert b.targets[k, :n].tolist() == ids[s + 1 : s + n + 1].tolist()
            assert n == min(stream.seg_len, len(ids) - 1 - s)
    return seen


def _check_lanes(seen, stream: LaneStream, shuffle: bool = True):
    for lane in seen:
        for (e0, d0, w0, _), (e1, d1, w1, new) in zip(lane, lane[1:], strict=False):
            if (e0, d0) == (e1, d1):
                assert w1 == w0 + 1 and not new  # in order, no skips, no shuffling inside a document
            else:
                assert new and w1 == 0 and w0 == stream.n_windows[d0] - 1  # a document is read to its end
        if shuffle:
            assert all(d >= 0 for _, d, _, _ in lane)  # no lane ever idles


def test_lanes_read_documents_in_order_and_every_window_once_per_epoch(real_docs):
    stream = LaneStream(real_docs, n_lanes=3, seg_len=64, seed=1)
    per_epoch = stream.windows_per_epoch()
    seen = _walk(stream, 2 * per_epoch // 3 + 5)
    _check_lanes(seen, stream)
    epoch0 = Counter((d, w) for lane in seen for e, d, w, _ in lane if e == 0)
    expected = {(d, w) for d, n in enumerate(stream.n_windows) for w in range(n)}
    assert set(epoch0) == expected and set(epoch0.values()) == {1}
    # each epoch deals the documents in a fresh seeded order
    assert stream._order(0) != stream._order(1)
    assert LaneStream(real_docs, 3, 64, seed=1)._order(1) == stream._order(1)


def test_lanes_are_balanced(real_docs):
    stream = LaneStream(real_docs, n_lanes=4, seg_len=32, seed=0)
    seen = _walk(stream, stream.windows_per_epoch() // 4)
    lengths = [sum(1 for e, _, _, _ in lane if e == 0) for lane in seen]
    # pulling the next document when one ends keeps lanes within one document of each other
    assert max(lengths) - min(lengths) <= max(stream.n_windows)


def test_stream_state_continues_exactly(real_docs):
    a = LaneStream(real_docs, 3, 48, seed=2)
    for _ in range(17):
        a.next_batch()
    b = LaneStream(real_docs, 3, 48, seed=2)
    b.load_state_dict(a.state_dict())
    for _ in range(40):
        x, y = a.next_batch(), b.next_batch()
        assert torch.equal(x.input_ids, y.input_ids) and torch.equal(x.new_doc, y.new_doc)


def test_eval_stream_reads_each_document_once_then_ends(real_docs):
    stream = LaneStream(real_docs, 3, 64, shuffle=False)
    batches = list(stream)
    windows = Counter((int(b.doc[k]), int(b.window[k])) for b in batches for k in range(3) if b.doc[k] >= 0)
    assert sum(windows.values()) == stream.windows_per_epoch() and set(windows.values()) == {1}


def test_corpus_file_round_trip(real_docs, tmp_path):
    held = [i % 4 == 0 for i in range(len(real_docs))]
    save_corpus(tmp_path / "c", real_docs, held, {"n": len(real_docs)})
    back = load_corpus(tmp_path / "c", "heldout")
    assert [d.doc_id for d in back] == [d.doc_id for d, h in zip(real_docs, held, strict=True) if h]
    assert np.array_equal(back[0].ids, real_docs[0].ids) and back[0].n_chars == real_docs[0].n_chars
    assert len(load_corpus(tmp_path / "c", "train")) + len(back) == len(real_docs)


def _synthetic(lengths: list[int]) -> list[EncodedDoc]:
    docs, start = [], 10
    for i, n in enumerate(lengths):
        ids = np.arange(start, start + n, dtype=np.int32)
        start += n
        docs.append(EncodedDoc(f"d{i}", "c", ids, np.zeros(n, np.int8), np.zeros(n, bool), n))
    return docs


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(2, 120), min_size=1, max_size=9),
    lanes=st.integers(1, 5),
    seg_len=st.integers(1, 40),
    seed=st.integers(0, 50),
)
def test_stream_invariants_hold_for_any_lengths(lengths, lanes, seg_len, seed):
    stream = LaneStream(_synthetic(lengths), lanes, seg_len, seed=seed)
    per_epoch = stream.windows_per_epoch()
    seen = _walk(stream, per_epoch + max(lengths))
    _check_lanes(seen, stream)
    epoch0 = Counter((d, w) for lane in seen for e, d, w, _ in lane if e == 0)
    assert sum(epoch0.values()) == per_epoch and set(epoch0.values()) == {1}


def test_memory_is_reset_where_a_lane_starts_a_new_document(real_docs):
    """A lane's first window of a new document gives exactly what the model gives that window alone."""
    from txl import TransformerXLConfig, TransformerXLLM
    from txl.recurrence import memory_for, run_batch

    torch.manual_seed(0)
    model = TransformerXLLM(
        TransformerXLConfig(
            vocab_size=16384,
            d_model=32,
            n_layer=2,
            n_head=2,
            d_head=16,
            d_inner=64,
            mem_len=32,
            dropout=0.0,
            cutoffs=[2000, 8000],
        )
    ).eval()
    shortest = sorted(real_docs, key=lambda d: len(d.ids))[:4]
    stream = LaneStream(shortest, n_lanes=2, seg_len=64, shuffle=False)
    memory = None
    checked = 0
    with torch.no_grad():
        for batch in stream:
            out = run_batch(model, batch, torch.device("cpu"), memory_for(memory, batch))
            for k in torch.nonzero(batch.new_doc & (batch.doc >= 0)).flatten().tolist():
                alone = run_batch(model, batch.lanes(k, k + 1), torch.device("cpu"))
                torch.testing.assert_close(out.hidden[k : k + 1], alone.hidden, rtol=1e-5, atol=1e-5)
                if memory is not None:
                    checked += 1
                    # the same window *with* the previous document's memory visible differs
                    leaked = model(batch.input_ids[k : k + 1], memory.lanes(k, k + 1))
                    assert not torch.allclose(leaked.hidden, alone.hidden, atol=1e-4)
            memory = out.memory
            if checked >= 2:
                break
    assert checked >= 2
