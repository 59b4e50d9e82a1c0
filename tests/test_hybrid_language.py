"""Language-aware fusion: Chinese queries drop the sentence-model arm, English ones keep it (real CLCR/CUAD text)."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.config import RetrievalConfig
from retrieval.eval.search import split_passages
from retrieval.hybrid import HybridIndex, MatrixArm, arm_weights, han_share, rrf


@pytest.fixture(scope="module")
def clcr_queries(shared_data) -> list[str]:
    with open(shared_data / "zh/retrieval/clcr_queries.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["query"] for line in f]


@pytest.fixture(scope="module")
def cuad(shared_data) -> tuple[dict, list[dict]]:
    """One held-apart-style CUAD contract and its answerable questions."""
    with gzip.open(shared_data / "en/contracts/cuad_contracts.jsonl.gz", "rt", encoding="utf-8") as f:
        contract = json.loads(f.readline())
    with gzip.open(shared_data / "en/contracts/cuad_qa.jsonl.gz", "rt", encoding="utf-8") as f:
        qs = [q for q in map(json.loads, f) if q["doc_id"] == contract["doc_id"]]
    return contract, qs


def test_every_clcr_query_is_chinese_and_no_cuad_question_is(clcr_queries, cuad):
    cfg = RetrievalConfig()
    assert all(han_share(q) >= cfg.zh_min_han_share for q in clcr_queries)
    assert all(
        arm_weights(q, cfg) == cfg.zh_arm_weights and cfg.zh_arm_weights["minilm"] == 0 for q in clcr_queries
    )
    _, qs = cuad
    assert qs and all(han_share(q["question"]) == 0.0 and arm_weights(q["question"], cfg) == {} for q in qs)
    # a mostly English query naming one Chinese term stays English; configured weights come through
    mixed = RetrievalConfig(arm_weights={"txl": 0.5})
    assert arm_weights("force majeure clause (不可抗力)", mixed) == {"txl": 0.5}
    assert arm_weights(clcr_queries[0], mixed) == {"txl": 0.0, "minilm": 0.0}


@given(
    st.lists(st.lists(st.integers(0, 20), unique=True, max_size=10), min_size=2, max_size=3),
    st.floats(0.1, 10),
)
def test_weighted_rrf_scales_with_its_weights_and_a_zero_arm_adds_nothing(rankings, c):
    arms = {f"a{i}": r for i, r in enumerate(rankings)}
    plain = rrf(arms)
    scaled = rrf(arms, weights={a: c for a in arms})
    assert [s * c for _, s, _ in plain] == pytest.approx([s for _, s, _ in scaled])
    muted = {k: s for k, s, _ in rrf(arms, weights={"a0": 0.0})}
    alone = {k: s for k, s, _ in rrf({a: r for a, r in arms.items() if a != "a0"})}
    assert {k: s for k, s in muted.items() if s > 0} == pytest.approx(alone)


def test_hybrid_skips_minilm_for_chinese_and_keeps_it_for_english(shared_data, clcr_queries, cuad):
    from retrieval.sentence import embed

    # Chinese: first passages of 12 real CLCR cases; the hybrid is BM25's ranking, MiniLM is never asked
    passages = []
    with gzip.open(shared_data / "zh/judgments/clcr_cases.jsonl.gz", "rt", encoding="utf-8") as f:
        for _, line in zip(range(12), f, strict=False):
            case = json.loads(line)
            passages += split_passages(case["id"], case["title"], case["text"], 400)[:1]
    asked: list[str] = []
    zh = HybridIndex(passages)
    zh.add_dense(
        "minilm",
        MatrixArm(
            embed([p.text for p in passages]), lambda q: asked.append(q) or embed([q])[0], len(passages)
        ),
    )
    query = clcr_queries[0]
    hits = zh.search(query, k=10)
    assert [h.segment_id for h in hits] == [h.segment_id for h in zh.search(query, k=10, arms=["bm25"])]
    assert all(set(h.ranks) == {"bm25"} for h in hits) and not asked
    equal = zh.search(query, k=10, weights={})  # plain RRF still fuses both arms
    assert any("minilm" in h.ranks for h in equal) and asked == [query]
    alone = zh.search(query, k=10, arms=["minilm"])  # an arm asked for alone answers, whatever its weight
    assert len(alone) == 10 and all(set(h.ranks) == {"minilm"} and h.score > 0 for h in alone)

    # English: a CUAD contract; the clause category's hybrid hits carry MiniLM ranks
    contract, qs = cuad
    en_passages = split_passages("c", "", contract["text"], 600)[:10]
    en = HybridIndex(en_passages)
    en.add_dense(
        "minilm", MatrixArm(embed([p.text for p in en_passages]), lambda q: embed([q])[0], len(en_passages))
    )
    category = qs[0]["category"]
    en_hits = en.search(category, k=10)
    assert any("minilm" in h.ranks for h in en_hits)
    assert [h.segment_id for h in en_hits] == [h.segment_id for h in en.search(category, k=10, weights={})]
