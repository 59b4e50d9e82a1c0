"""Cross-document injection never draws on a near-duplicate of the document being encoded (a real
judgment with a few characters changed), however the documents are batched; the store keeps the
signatures that decide it across reopening."""

from __future__ import annotations

import gzip
import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_models import tiny_encoder

from pipeline.records import BlockType, Segment
from pipeline.tokenizer import encode_segment, load_tokenizer
from retrieval.config import RetrievalConfig
from retrieval.inject import DocInput, encode_document, encode_stream
from retrieval.predict.config import PredictConfig
from retrieval.predict.dedup import find_duplicates
from retrieval.stage import index_segments
from retrieval.store import SegmentEntry, SegmentStore
from retrieval.store_dedup import StoreDuplicates
from retrieval.store_signatures import DocSignatures

pytestmark = pytest.mark.usefixtures("torch_one_thread")

THRESHOLD = PredictConfig().duplicate_doc_threshold


def _segments(text: str, doc_id: str, width: int = 60, n: int = 12) -> list[Segment]:
    """Fixed-width character windows of a text, typed FACTS (the segmenter is not under test here)."""
    return [
        Segment(doc_id, i, 0, BlockType.FACTS, text[s : s + width], 0, s, s + len(text[s : s + width]))
        for i, s in enumerate(range(0, min(len(text), n * width), width))
    ]


def _changed(text: str, at: list[int], chars: str = "甲乙丙丁戊") -> str:
    """The text with the characters at these positions replaced (an amended or re-published copy)."""
    out = list(text)
    for n, i in enumerate(at):
        out[i] = chars[n % len(chars)] if out[i] != chars[n % len(chars)] else "己"
    return "".join(out)


@pytest.fixture(scope="module")
def judgments(shared_data) -> list[str]:
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        texts = [json.loads(line)["fd"] for line in itertools.islice(f, 40)]
    return [t for t in texts if len(t) >= 1500][:4]


@pytest.fixture(scope="module")
def corpus(judgments):
    """The original, its near-duplicate (three characters changed), a document that shares the
    original's first half and goes on as another case (similar, not a duplicate), and an unrelated one."""
    original, other, unrelated = judgments[0], judgments[1], judgments[2]
    texts = {
        "orig": original,
        "copy": _changed(original, [70, 300, 610]),
        "half": original[:360] + other[:360],
        "unrel": unrelated,
    }
    tok = load_tokenizer()
    docs = {}
    for doc_id, text in texts.items():
        segs = _segments(text, doc_id)
        docs[doc_id] = DocInput(segs, [encode_segment(s, tok)[0] for s in segs])
    model = tiny_encoder(tok, mem_len=64, clamp_len=200)
    return model, docs


def _store(path, model, config: RetrievalConfig) -> SegmentStore:
    c = model.cfg
    return SegmentStore.create(path, c.d_model, (c.n_layer, config.states_per_layer, c.d_model), config)


def _drawn_from(encoded, doc_id: str) -> list[str]:
    return [sid for e in encoded for sid in e.retrieved if sid.startswith(f"{doc_id}:")]


CROSS = RetrievalConfig(inject_k=3, inject_cross_document=True, states_per_layer=16)


def test_the_fixture_pairs_are_what_the_dedup_stage_says(corpus):
    _, docs = corpus
    pairs = {
        (p.a, p.b) for p in find_duplicates({d: x.segments for d, x in docs.items()}, THRESHOLD).documents
    }
    assert pairs == {("copy", "orig")} or pairs == {("orig", "copy")}


def test_a_near_duplicate_of_a_stored_document_never_receives_its_segments(tmp_path, corpus):
    model, docs = corpus
    store = _store(tmp_path / "ix", model, CROSS)
    encode_document(model, docs["orig"].segments, docs["orig"].token_ids, store, CROSS)
    store.commit()
    # a second run into the same index: the original is known by its stored signature only
    store = SegmentStore.open(tmp_path / "ix", config=CROSS)
    others = dict(encode_stream(model, [docs["half"], docs["unrel"]], store, CROSS))
    # the half that repeats the original finds the original's very segments; the unrelated case too
    assert _drawn_from(others[0], "orig") and _drawn_from(others[1], "orig")
    copy = encode_document(model, docs["copy"].segments, docs["copy"].token_ids, store, CROSS)
    drawn = {s.split(":")[0] for e in copy for s in e.retrieved}
    assert "orig" not in drawn and drawn & {"half", "unrel"}  # it does draw on the other documents


def test_near_duplicates_encoded_side_by_side_never_reach_each_other(tmp_path, corpus):
    model, docs = corpus
    store = _store(tmp_path / "side", model, CROSS)
    out = dict(encode_stream(model, [docs["orig"], docs["copy"], docs["half"]], store, CROSS))
    assert not _drawn_from(out[0], "copy") and not _drawn_from(out[1], "orig")
    assert _drawn_from(out[2], "orig") or _drawn_from(out[2], "copy")  # similar documents still may


def test_signatures_survive_reopening_and_leave_with_their_document(tmp_path, corpus):
    _, docs = corpus
    store = SegmentStore.create(tmp_path / "ix", dim=4)
    duplicates = StoreDuplicates(store, THRESHOLD)
    for doc_id in ("orig", "half", "unrel"):
        segs = docs[doc_id].segments
        duplicates.enter(doc_id, segs)
        keys = np.eye(4, dtype=np.float32)[np.arange(len(segs)) % 4]
        store.add([SegmentEntry(s.segment_id, doc_id, s.seg_idx, "FACTS") for s in segs], keys)
    store.commit()
    back = SegmentStore.open(tmp_path / "ix", mmap=True)
    assert back.signatures.scheme == store.signatures.scheme
    assert sorted(back.signatures.hashes) == ["half", "orig", "unrel"]
    for doc_id, h in store.signatures.hashes.items():
        np.testing.assert_array_equal(back.signatures.hashes[doc_id], h)
    # a later run knows the stored original when its copy enters
    again = SegmentStore.open(tmp_path / "ix")
    later = StoreDuplicates(again, THRESHOLD)
    later.enter("copy", docs["copy"].segments)
    assert later.injectable("copy") == {"half", "unrel"}
    assert later.injectable("unrel") == {"orig", "half", "copy"}
    again.delete_document("orig")
    again.commit()
    # kept: the signatures of documents with segments in the store (the copy stored none)
    assert sorted(SegmentStore.open(tmp_path / "ix").signatures.hashes) == ["half", "unrel"]
    assert [p.name for p in sorted((tmp_path / "ix").glob("sig-*.parquet"))] == [
        f"sig-{again.manifest['generation']}.parquet"
    ]


@pytest.fixture(scope="module")
def long_documents(judgments) -> dict[str, list[Segment]]:
    return {f"j{i}": _segments(t, f"j{i}", 200, 7) for i, t in enumerate(judgments)}


@pytest.fixture(scope="module")
def two_stores(tmp_path_factory) -> tuple[SegmentStore, SegmentStore]:
    root = tmp_path_factory.mktemp("stores")
    return SegmentStore.create(root / "all", dim=4), SegmentStore.create(root / "pair", dim=4)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_whether_a_pair_is_kept_apart_depends_on_the_pair_alone(two_stores, long_documents, data):
    """Copies of real judgments with a few characters changed, and the judgments, entering a store in
    any order and any number: a copy and its original are always kept apart, and whether one document
    may draw on another is the same as in a store of those two alone, and the same both ways."""
    docs, copy_of = dict(long_documents), {}
    for n in range(data.draw(st.integers(1, 4), label="copies")):
        source = data.draw(st.sampled_from(sorted(long_documents)), label="source")
        text = "".join(s.text for s in long_documents[source])
        at = data.draw(st.lists(st.integers(0, len(text) - 1), min_size=1, max_size=5), label="changed")
        docs[f"c{n}"], copy_of[f"c{n}"] = _segments(_changed(text, at), f"c{n}", 200, 7), source
    order = data.draw(st.permutations(sorted(docs)), label="order")
    entered = order[: data.draw(st.integers(2, len(order)), label="entered")]
    store, pair = two_stores
    store.signatures = DocSignatures()  # a store that knows no document yet, for each example
    together = StoreDuplicates(store, THRESHOLD)
    for doc_id in entered:
        together.enter(doc_id, docs[doc_id])
    apart = {d: together.injectable(d) for d in entered}
    for a, b in itertools.combinations(entered, 2):
        pair.signatures = DocSignatures()
        alone = StoreDuplicates(pair, THRESHOLD)
        alone.enter(a, docs[a])
        alone.enter(b, docs[b])
        assert (b in apart[a]) == (a in apart[b]) == (b in alone.injectable(a)) == (a in alone.injectable(b))
        # a copy with at most five characters changed, and two copies of one judgment, are near-duplicates
        if copy_of.get(a, a) == copy_of.get(b, b):
            assert b not in apart[a]


def test_the_index_stage_keeps_the_signatures_of_documents_it_does_not_encode_again(tmp_path, corpus):
    """Two `ldx run`s into one OUT_DIR, the first one's store from before signatures were kept: the
    second run keeps the unchanged documents without encoding them, makes their signatures from their
    segments, and the copy that it encodes may not draw on its original."""
    model, docs = corpus
    tok = load_tokenizer()
    first = [docs["orig"].segments, docs["unrel"].segments]
    index_segments(tmp_path, first, model, tok, CROSS, segmenter="s")
    manifest = tmp_path / "index" / "manifest.json"
    old = json.loads(manifest.read_text(encoding="utf-8"))
    del old["signatures"]
    manifest.write_text(json.dumps(old), encoding="utf-8")
    assert not SegmentStore.open(tmp_path / "index").signatures.hashes
    counts = index_segments(tmp_path, [*first, docs["copy"].segments], model, tok, CROSS, segmenter="s")
    assert counts["kept_documents"] == 2 and counts["indexed_documents"] == 1
    store = SegmentStore.open(tmp_path / "index")
    assert sorted(store.signatures.hashes) == ["copy", "orig", "unrel"]
    assert StoreDuplicates(store, THRESHOLD).injectable("copy") == {"unrel"}
