"""Segments: block-respecting, within the token limit, cut at sentence ends, offsets into the document."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legal_docs import en_judgments, zh_judgments

import pipeline
from pipeline.config import SegmentConfig
from pipeline.errors import SegmentError
from pipeline.records import Block, BlockType, DocKind, Document, Segment
from pipeline.segmenter import segment_document
from pipeline.sentences import sentence_spans
from pipeline.tokenizer import encode_segment, load_tokenizer


@pytest.fixture(scope="module")
def real_docs(shared_data) -> list[Document]:
    return zh_judgments(shared_data, 150) + en_judgments(shared_data, 24)


def check_invariants(doc: Document, segments: list[Segment], max_tokens: int) -> None:
    """The contract of DESIGN.md and the issue, for one document."""
    by_block: dict[int, list[Segment]] = {}
    for i, seg in enumerate(segments):
        assert seg.seg_idx == i and seg.doc_id == doc.doc_id
        assert 0 < seg.n_tokens <= max_tokens
        assert doc.text[seg.char_start : seg.char_end] == seg.text
        block = doc.blocks[seg.block_idx]
        assert block.char_start <= seg.char_start < seg.char_end <= block.char_end, (
            "segment crosses its block"
        )
        assert seg.type == block.type
        by_block.setdefault(seg.block_idx, []).append(seg)
    for block in doc.blocks:
        if block.text.strip():
            assert "".join(s.text for s in by_block[block.block_idx]) == block.text


def sentence_end_report(doc: Document, segments: list[Segment], budget: int, tokenizer) -> tuple[int, int]:
    """(segments of blocks longer than the limit, those ending at a sentence end or their block's end);
    asserts that a cut inside a sentence happens only in a sentence longer than the limit."""
    segs_by_block: dict[int, list[Segment]] = {}
    for seg in segments:
        segs_by_block.setdefault(seg.block_idx, []).append(seg)
    total = at_end = 0
    for idx, segs in segs_by_block.items():
        if len(segs) < 2:
            continue
        block = doc.blocks[idx]
        spans = sentence_spans(block.text)
        ends = {e for _, e in spans}
        for seg in segs:
            cut = seg.char_end - block.char_start
            total += 1
            if cut in ends:
                at_end += 1
                continue
            start, end = next((s, e) for s, e in spans if s < cut < e)
            assert len(tokenizer.encode(block.text[start:end])) > budget, block.text[start:end]
    return total, at_end


@pytest.mark.parametrize("max_tokens, floor", [(384, 0.98), (128, 0.9)])
def test_real_judgments_keep_the_contract_and_end_at_sentence_ends(real_docs, max_tokens, floor):
    tokenizer = load_tokenizer()
    config = SegmentConfig(max_tokens=max_tokens)
    docs = real_docs if max_tokens == 384 else real_docs[:60] + real_docs[-3:]
    total = at_end = 0
    for doc in docs:
        segments = segment_document(doc, config)
        check_invariants(doc, segments, config.max_tokens)
        t, a = sentence_end_report(doc, segments, config.max_tokens - 2, tokenizer)
        total, at_end = total + t, at_end + a
    print(f"max_tokens={max_tokens}: segments of long blocks ending at a sentence end {at_end}/{total}")
    assert total > 60
    assert at_end / total >= floor


@settings(max_examples=30, deadline=None)
@given(data=st.data(), max_tokens=st.integers(16, 512))
def test_real_documents_under_any_limit(real_docs, data, max_tokens):
    doc = data.draw(st.sampled_from(real_docs))
    check_invariants(doc, segment_document(doc, SegmentConfig(max_tokens=max_tokens)), max_tokens)


def test_n_tokens_is_what_the_model_gets(real_docs):
    tokenizer = load_tokenizer()
    doc = real_docs[-1]
    segments = pipeline.segment(doc)
    check_invariants(doc, segments, 384)
    for seg in segments:
        ids, mask = encode_segment(seg, tokenizer)
        assert len(ids) == len(mask) == seg.n_tokens
        assert ids[0] == (tokenizer.doc_id if seg.seg_idx == 0 else tokenizer.block_ids[seg.type])
    assert any(s.n_tokens > 300 for s in segments), "long English paragraphs should fill segments"


def test_tiny_blocks_stay_single_unless_packed(real_docs):
    doc = real_docs[0]  # a zh judgment: many one-line blocks
    plain = segment_document(doc)
    assert [s.block_idx for s in plain] == [b.block_idx for b in doc.blocks if b.text.strip()]
    config = SegmentConfig(pack_tiny=True, tiny_tokens=24)
    packed = segment_document(doc, config)
    assert len(packed) < len(plain)
    for seg in packed:
        assert seg.n_tokens <= config.max_tokens
        assert doc.text[seg.char_start : seg.char_end] == seg.text
        inside = [b for b in doc.blocks if seg.char_start <= b.char_start < seg.char_end]
        assert {b.type for b in inside} == {seg.type}


def test_over_long_sentence_is_cut_inside_and_tiles(shared_data):
    text = zh_judgments(shared_data, 1)[0].text.replace("。", "，")  # one endless sentence
    doc = Document(
        "x",
        "x.txt",
        DocKind.ZH_JUDGMENT,
        "zh",
        text,
        blocks=[Block("x", 0, BlockType.FACTS, text, 0, len(text))],
    )
    segments = segment_document(doc, SegmentConfig(max_tokens=64))
    check_invariants(doc, segments, 64)
    assert len(segments) > 5
    # cut after a clause mark or before a space where one is in reach
    soft = [
        a.text[-1] in "，、；：" or b.text[0].isspace() for a, b in zip(segments, segments[1:], strict=False)
    ]
    assert sum(soft) >= 0.8 * len(soft)


def test_errors_are_typed():
    empty = Document(
        "e", "empty.txt", DocKind.GENERIC, "en", "   ", blocks=[Block("e", 0, BlockType.OTHER, "   ", 0, 3)]
    )
    with pytest.raises(SegmentError, match="empty.txt"):
        segment_document(empty)
    with pytest.raises(ValueError, match="max_tokens"):
        segment_document(empty, SegmentConfig(max_tokens=4))


SENTENCE_PIECES = [
    "本院认为，",
    "被告人张某犯盗窃罪。",
    "但是",
    "判处有期徒刑一年；",
    "See Smith v. Jones, No. 12. ",
    "The appeal is dismissed. ",
    "1. This ",
    "however, s. 3 applies! ",
    "\n",
    "  ",
    "𠀀",
    "x" * 40,
]


@st.composite
def documents(draw) -> Document:
    pieces = st.lists(
        st.one_of(st.sampled_from(SENTENCE_PIECES), st.text(max_size=12)), min_size=1, max_size=30
    )
    texts = draw(st.lists(pieces.map("".join), min_size=1, max_size=6))
    blocks, parts, pos = [], [], 0
    for i, t in enumerate(texts):
        blocks.append(Block("h", i, draw(st.sampled_from(list(BlockType))), t, pos, pos + len(t)))
        parts.append(t + "\n")
        pos += len(t) + 1
    return Document("h", "h.txt", DocKind.GENERIC, "zh", "".join(parts), blocks=blocks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), max_tokens=st.integers(16, 48), pack=st.booleans())
def test_generated_blocks_keep_the_contract(doc, max_tokens, pack):
    if not any(b.text.strip() for b in doc.blocks):
        with pytest.raises(SegmentError):
            segment_document(doc)
        return
    config = SegmentConfig(max_tokens=max_tokens, pack_tiny=pack)
    segments = segment_document(doc, config)
    if not pack:
        check_invariants(doc, segments, max_tokens)
    # packed or not: in order, disjoint, within the limit, and every block's text in exactly one place
    for a, b in zip(segments, segments[1:], strict=False):
        assert a.char_end <= b.char_start
    for seg in segments:
        assert seg.n_tokens <= max_tokens and doc.text[seg.char_start : seg.char_end] == seg.text
    for block in doc.blocks:
        if block.text.strip():
            overlap = sum(
                max(0, min(s.char_end, block.char_end) - max(s.char_start, block.char_start))
                for s in segments
            )
            assert overlap == len(block.text)


@pytest.mark.slow
def test_parsed_documents_segment(shared_data):
    """End to end with the parser: real files through `pipeline.parse`, then `pipeline.segment`."""
    for path in sorted((shared_data / "zh/pdf").glob("*.pdf"))[:1] + [
        shared_data / "zh/judgments/wenshu_mixed.jsonl"
    ]:
        doc = pipeline.parse(path)
        segments = pipeline.segment(doc)
        check_invariants(doc, segments, 384)
        assert {s.type for s in segments} - {BlockType.OTHER}, "the parser's block types reach the segments"
