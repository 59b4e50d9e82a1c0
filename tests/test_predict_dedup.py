"""Near-duplicates and shared passages over real judgments; prefix chains for reusing encoded states."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.config import ParseConfig
from pipeline.records import BlockType, Segment
from retrieval.predict.dedup import find_duplicates
from retrieval.prefix import chain_hashes, shared_prefix_saving


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


def _edited(segments: list[Segment], doc_id: str, every: int) -> list[Segment]:
    """A copy with one character in `every` replaced: from a retyped copy to a lightly edited one."""
    return [
        dataclasses.replace(
            s, doc_id=doc_id, text="".join("某" if i % every == 3 else c for i, c in enumerate(s.text))
        )
        for s in segments
    ]


def test_every_pair_at_the_threshold_is_found_not_only_the_ones_lsh_happens_to_offer(corpus):
    """The LSH only proposes candidates; a pair whose estimated similarity reaches the threshold must
    come out however its signature falls into the bands (at 0.8 the default banding offered 36%)."""
    from retrieval.predict.dedup import signatures

    docs = {}
    for n, doc_id in enumerate(list(corpus)[:12]):
        docs[doc_id] = corpus[doc_id]
        docs[f"{doc_id}-edited"] = _edited(corpus[doc_id], f"{doc_id}-edited", every=30 + 10 * n)
    sigs = signatures(docs).documents
    wanted = {
        tuple(sorted((a, b))) for a, b in itertools.combinations(sigs, 2) if sigs[a].jaccard(sigs[b]) >= 0.8
    }
    assert len(wanted) >= 6  # the edits leave pairs on both sides of the threshold
    found = {tuple(sorted((p.a, p.b))) for p in find_duplicates(docs).documents}
    assert found == wanted


def test_quoted_passage_is_shared(corpus):
    a, b = list(corpus)[:2]
    facts = max(
        (s for s in corpus[a] if s.type in (BlockType.CLAIMS, BlockType.FACTS)), key=lambda s: len(s.text)
    )
    # a second-instance judgment quoting the first one's facts: b with a's passage appended
    quoted = dataclasses.replace(facts, doc_id=b, seg_idx=len(corpus[b]))
    found = find_duplicates({a: corpus[a], b: corpus[b] + [quoted]})
    assert (facts.segment_id, quoted.segment_id) in {(p.a, p.b) for p in found.passages} | {
        (p.b, p.a) for p in found.passages
    }


def _chain(segments: list[Segment], tok) -> list[str]:
    from pipeline.tokenizer import encode_segment

    enc = [encode_segment(s, tok) for s in segments]
    return chain_hashes([str(s.type) for s in segments], [e[0] for e in enc], [e[1] for e in enc])


def test_prefix_saving_counts_the_duplicated_document(corpus):
    from pipeline.tokenizer import load_tokenizer

    tok = load_tokenizer()
    first = next(iter(corpus))
    docs = list(corpus.values())
    chains = [_chain(segs, tok) for segs in docs]
    lengths = [[s.n_tokens for s in segs] for segs in docs]
    base = shared_prefix_saving(chains, lengths)
    with_copy = shared_prefix_saving(
        [*chains, _chain(_renamed(corpus[first], "copy"), tok)], [*lengths, lengths[0]]
    )
    assert with_copy["segments_reused"] - base["segments_reused"] == len(corpus[first])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 99), min_size=1, max_size=8), min_size=1, max_size=6),
    st.integers(0, 5),
    st.integers(0, 99),
)
def test_prefix_chains_equal_exactly_up_to_the_first_difference(ids, cut, extra):
    def chain(token_ids):
        n = len(token_ids)
        return chain_hashes(["FACTS"] * n, token_ids, [[False] * len(t) for t in token_ids])

    cut = min(cut, len(ids) - 1)
    changed = ids[:cut] + [ids[cut] + [extra]] + ids[cut + 1 :]
    ka, kb = chain(ids), chain(changed)
    assert ka[:cut] == kb[:cut]
    assert all(x != y for x, y in zip(ka[cut:], kb[cut:], strict=True))
