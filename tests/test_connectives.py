"""Connective marks: every 但是 / however in real judgments is found, look-alikes are not, the lexicon is
configurable, and the per-token mask follows the tokenizer's offsets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from legal_docs import en_judgments, zh_judgments

from pipeline.config import SegmentConfig
from pipeline.connectives import DEFAULT_LEXICON, clause_spans, find_connectives, token_mask
from pipeline.segmenter import segment_document
from pipeline.tokenizer import encode_segment, load_tokenizer


@pytest.fixture(scope="module")
def zh_docs(shared_data):
    return zh_judgments(shared_data, 390)


@pytest.fixture(scope="module")
def en_docs(shared_data):
    return en_judgments(shared_data, 12)


def covered(spans, start, end) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def test_every_danshi_and_however_in_real_judgments_is_marked(zh_docs, en_docs):
    n_zh = n_en = 0
    for doc in zh_docs:
        spans = find_connectives(doc.text)
        for m in re.finditer("但是", doc.text):
            n_zh += 1
            assert covered(spans, m.start(), m.end()), doc.text[m.start() - 20 : m.end() + 20]
    for doc in en_docs:
        spans = find_connectives(doc.text)
        for m in re.finditer(r"\bhowever\b", doc.text, re.IGNORECASE):
            n_en += 1
            assert covered(spans, m.start(), m.end())
    assert n_zh > 50 and n_en > 50


def test_segments_carry_the_marks_of_their_text(zh_docs):
    for doc in zh_docs[:60]:
        for seg in segment_document(doc):
            assert seg.connectives == find_connectives(seg.text)
            for s, e in seg.connectives:
                assert seg.text[s:e] in DEFAULT_LEXICON


@pytest.mark.parametrize(
    "text, marked",
    [
        ("但凡被告人有自首情节的，可以从轻处罚", []),
        ("不但如此，非但无罪", []),
        ("依照本条但书的规定", []),
        ("可以从轻处罚，但累犯除外", ["但", "除外"]),
        ("被告人虽有自首情节，但是系累犯", ["虽", "但是"]),
        ("不过三日即归还", []),
        ("他说：不过，本院认为", ["不过"]),
        ("The butter and the rebuttal; Butterworths", []),
        ("But the appeal fails. However, the order stands", ["But", "However"]),
        (
            "Provided\nthat the lessee pays; subject to clause 3, save as set out",
            ["Provided\nthat", "subject to", "save as"],
        ),
        ("The exception and the exceptional case; except that it is not", ["except that"]),
    ],
)
def test_boundaries(text, marked):
    assert [text[s:e] for s, e in find_connectives(text)] == marked


def test_lexicon_is_configurable(zh_docs):
    text = "被告人虽有自首情节，但是系累犯；however, it fails"
    assert [text[s:e] for s, e in find_connectives(text, ["但", "HOWEVER"])] == ["但", "however"]
    assert find_connectives(text, []) == []
    doc = zh_docs[0]
    segments = segment_document(doc, SegmentConfig(connectives=["被告人"]))
    marked = {seg.text[s:e] for seg in segments for s, e in seg.connectives}
    assert marked == {"被告人"}


def test_token_mask_flags_the_token_after_each_connective(en_docs):
    tokenizer = load_tokenizer()
    segments = [s for s in segment_document(en_docs[0]) if s.connectives]
    assert segments
    for seg in segments[:20]:
        ids, mask = encode_segment(seg, tokenizer)
        _, clause_mask = encode_segment(seg, tokenizer, clause=True)
        enc = tokenizer.hf.encode(seg.text, add_special_tokens=False)
        prefix = len(ids) - len(enc.ids)
        ends = [b for _, b in enc.offsets]
        expected = {next(i for i, b in enumerate(ends) if b > e) for _, e in seg.connectives if e < ends[-1]}
        assert {i - prefix for i, m in enumerate(mask) if m} == expected
        assert all(c for m, c in zip(mask, clause_mask, strict=True) if m)  # the clause holds its flag
        assert sum(clause_mask) >= sum(mask)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_token_flags_never_look_ahead(lang, zh_docs, en_docs):
    """A token's flag is the same when the text stops right after that token: it tells the model nothing
    about the tokens that follow (the old marks flagged "subject" only where "to" came next)."""
    tokenizer = load_tokenizer()
    docs = zh_docs[:3] if lang == "zh" else en_docs[:2]
    segments = [s for d in docs for s in segment_document(d) if s.connectives][:12]
    assert segments
    for seg in segments:
        offsets = tokenizer.hf.encode(seg.text, add_special_tokens=False).offsets
        for clause in (False, True):
            full = token_mask(seg.text, seg.connectives, offsets, clause=clause)
            for i, (_, end) in enumerate(offsets):
                head = seg.text[:end]
                alone = token_mask(head, find_connectives(head), offsets[: i + 1], clause=clause)
                assert alone[i] == full[i], (seg.text[max(0, end - 20) : end + 10], clause)


def test_clause_runs_to_the_next_punctuation():
    text = "可以从轻处罚，但累犯除外。However the order stands, and"
    spans = find_connectives(text)
    assert [text[s:e] for s, e in clause_spans(text, spans)] == [
        "但累犯除外",
        "除外",
        "However the order stands",
    ]


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="但是凡不过除外否则 abutHoweverprovidedthat，。\n", max_size=60))
def test_spans_are_sorted_disjoint_and_mask_aligned(text):
    spans = find_connectives(text)
    assert all(0 <= s < e <= len(text) for s, e in spans)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    offsets = load_tokenizer().hf.encode(text, add_special_tokens=False).offsets
    assert len(token_mask(text, spans, offsets, clause=True)) == len(offsets)
