"""Near-duplicates and shared passages over real judgments; prefix keys for reusing encoded states."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.config import ParseConfig
from pipeline.records import BlockType, Segment
from retrieval.dedup import PrefixStateCache, find_duplicates, prefix_keys, shared_prefix_saving


def _renamed(segments: list[Segment], doc_id: str) -> list[Segment]:
    return [dataclasses.replace(s, doc_id=doc_id) for s in segments]


@pytest.fixture(scope="module")
def corpus(shared_data) -> dict[str, list[Segment]]:
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    docs = list(itertools.islice(pipeline.load_documents(path, ParseConfig(jsonl_text_field="fd")), 30))
    return {d.doc_id: pipeline.segment(d) for d in docs}


def test_copy_is_a_near_duplicate_and_distinct_cases_are_not(corpus):
    first = next(iter(corpus))
    with_copy = {**corpus, "copy-of-first": _renamed(corpus[first], "copy-of-first")}
    found = find_duplicates(with_copy)
    pairs = {(p.a, p.b) for p in found.documents}
    assert tuple(sorted((first, "copy-of-first"))) in pairs
    # the other 29 real cases are different crimes by different people
    assert all("copy-of-first" in (p.a, p.b) for p in found.documents), found.documents


def test_quoted_passage_is_shared(corpus):
    a, b = list(corpus)[:2]
    facts = max((s for s in corpus[a] if s.type in (BlockType.CLAIMS, BlockType.FACTS)), key=lambda s: len(s.text))
    # a second-instance judgment quoting the first one's facts: b with a's passage appended
    quoted = dataclasses.replace(facts, doc_id=b, seg_idx=len(corpus[b]))
    found = find_duplicates({a: corpus[a], b: corpus[b] + [quoted]})
    assert (facts.segment_id, quoted.segment_id) in {(p.a, p.b) for p in found.passages} | {
        (p.b, p.a) for p in found.passages
    }


def test_prefix_saving_counts_the_duplicated_document(corpus):
    first = next(iter(corpus))
    base = shared_prefix_saving(corpus)
    with_copy = shared_prefix_saving({**corpus, "copy": _renamed(corpus[first], "copy")})
    assert with_copy["segments_reused"] - base["segments_reused"] == len(corpus[first])
    cache = PrefixStateCache()
    for key in prefix_keys(corpus[first]) * 2:
        if cache.get(key) is None:
            cache.put(key, object())
    assert cache.saving == 0.5


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=6), st.integers(0, 5), st.text(max_size=5))
def test_prefix_keys_equal_exactly_up_to_the_first_difference(texts, cut, extra):
    def segs(ts):
        return [Segment("d", i, 0, BlockType.FACTS, t, 1, 0, len(t)) for i, t in enumerate(ts)]

    cut = min(cut, len(texts) - 1)
    changed = texts[:cut] + [texts[cut] + extra + "x"] + texts[cut + 1 :]
    ka, kb = prefix_keys(segs(texts)), prefix_keys(segs(changed))
    assert ka[:cut] == kb[:cut]
    assert all(x != y for x, y in zip(ka[cut:], kb[cut:], strict=True))
