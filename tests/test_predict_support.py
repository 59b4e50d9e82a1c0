"""Claim support: the elements of a shared grant's independent claims, the description passages the
retrieval layer finds for them, cited with page and bbox, and the hand-checked recall (benchmarks/data)."""

from __future__ import annotations

import json

import pytest
from predict_tasks import only

import pipeline
from benchmarks.claim_support import LABELS, grants, labelled_elements, recall
from pipeline.records import BlockType
from retrieval.predict.stage import predict_stage
from retrieval.predict.support import SUPPORT_TYPES, claim_elements, claim_support, independent_claims


@pytest.fixture(scope="module")
def labels():
    return json.loads(LABELS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def grant(labels, shared_data):
    line = labels["patents"][0]["line"]
    return grants({line})[line]


def test_elements_follow_the_transition_and_split_at_semicolons():
    claim = (
        "1. A cleaning robot comprising:\na chassis carrying two drive wheels;\na brush assembly mounted "
        "under the chassis; and\na controller that steers the drive wheels away from an obstacle."
    )
    words = [claim[s:e] for s, e in claim_elements(claim)]
    assert words == [
        "a chassis carrying two drive wheels",
        "a brush assembly mounted under the chassis",
        "a controller that steers the drive wheels away from an obstacle",
    ]
    assert claim_elements("2. The robot of claim 1, wherein") == []


def test_rows_cite_description_passages_with_page_and_bbox(grant):
    segs = pipeline.segment(grant)
    # the grant is plain text: give its blocks the pages and boxes a PDF parse would, to see them cited
    for b in grant.blocks:
        b.page, b.bbox = b.block_idx // 10, (72.0, 100.0 + b.block_idx % 10, 540.0, 160.0)
    rows = predict_stage([grant], segs, only("claim_support"))
    assert rows and {p.task for p in rows} == {"claim_support"}
    independent = {n for n, _ in independent_claims(grant)}
    by_id = {s.segment_id: s for s in segs}
    blocks = {b.block_idx: b for b in grant.blocks}
    for p in rows:
        claim, element, *cited = p.values
        assert int(claim) in independent and int(element) >= 1 and 1 <= len(cited) <= 3
        here, *passages = p.evidence
        assert grant.text[here.char_start : here.char_end] == here.text == p.value
        for e in passages:
            seg = by_id[e.segment_id]
            assert seg.type in SUPPORT_TYPES and seg.type not in (BlockType.CLAIM, BlockType.ABSTRACT)
            assert (e.page, e.bbox) == (blocks[seg.block_idx].page, list(blocks[seg.block_idx].bbox))
            assert grant.text[e.char_start : e.char_end] == e.text


def test_bm25_baseline_is_its_own_model(grant):
    segs = pipeline.segment(grant)
    rows = claim_support(grant, segs, k=2, dense=False)
    assert rows and {p.model_id for p in rows} == {"support-bm25-v1"}


def test_hand_checked_recall_beats_or_matches_the_baseline(labels):
    elements = labelled_elements(labels)
    assert 3 <= len(labels["patents"]) <= 5 and len(elements) >= 12
    hybrid, bm25 = recall(elements, True, [3]), recall(elements, False, [3])
    print("recall@3 hybrid", hybrid, "bm25", bm25)
    assert hybrid["recall@3"] >= bm25["recall@3"] and hybrid["recall@3"] >= 0.5
