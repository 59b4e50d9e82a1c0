"""Hybrid search, its metrics and `ldx eval retrieval`, on small real slices of CLCR and CUAD."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.eval.metrics import best_over_golds, char_f1, ndcg_at_k, recall_at_k
from retrieval.eval.search import RetrievalEvalConfig, build_eval_set, case_means, load_qrels, split_passages
from retrieval.hybrid import Filters, HybridIndex, MatrixArm, Passage, rrf
from retrieval.text import span_chars, terms, whole_number_end


@pytest.fixture(scope="module")
def clcr_slice(shared_data, tmp_path_factory):
    """Two labelled CLCR queries with their judged cases plus 15 unjudged cases, written as a CLCR-layout set."""
    root = shared_data / "zh"
    gains = load_qrels(root / "retrieval/clcr_qrels_by_annotator.tsv")
    qids = ["1", "19"]
    judged = {c for q in qids for c in gains[q]}
    cases, others = [], []
    with gzip.open(root / "judgments/clcr_cases.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["id"] in judged:
                cases.append(row)
            elif len(others) < 15:
                others.append(row)
    out = tmp_path_factory.mktemp("clcr")
    with open(out / "cases.jsonl", "w", encoding="utf-8") as f:
        for row in cases + others:
            f.write(
                json.dumps({"id": row["id"], "title": row["title"], "text": row["text"]}, ensure_ascii=False)
                + "\n"
            )
    with open(root / "retrieval/clcr_queries.jsonl", encoding="utf-8") as f, open(out / "q.jsonl", "w") as g:
        for line in f:
            if str(json.loads(line)["task_id"]) in qids:
                g.write(line)
    with (
        open(root / "retrieval/clcr_qrels_by_annotator.tsv", encoding="utf-8") as f,
        open(out / "qrels.tsv", "w") as g,
    ):
        rows = list(csv.reader(f, delimiter="\t"))
        g.writelines("\t".join(r) + "\n" for r in rows if r[0] == "task_id" or r[0] in qids)
    return out, gains, qids


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True),
    st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 2)),
)
def test_ndcg_and_recall_are_bounded_and_ideal_order_scores_one(ranking, gains):
    for k in (1, 3, 10):
        assert 0.0 <= ndcg_at_k(ranking, gains, k) <= 1.0 + 1e-9
        assert 0.0 <= recall_at_k(ranking, gains, k) <= 1.0
    ideal = sorted((d for d, g in gains.items() if g > 0), key=lambda d: -gains[d])
    if ideal:
        assert ndcg_at_k(ideal, gains, 10) == pytest.approx(1.0)


def test_cjrc_normalisation_is_char_level_and_takes_best_gold():
    assert char_f1("夫妻感情破裂", "因夫妻感情破裂") == pytest.approx(2 * 1.0 * (6 / 7) / (1 + 6 / 7))
    assert best_over_golds("800元。", ["生活费800元", "800元"]) == (1.0, 1.0)
    assert best_over_golds("", [""]) == (1.0, 1.0)  # no answer predicted for an unanswerable question
    assert best_over_golds("YES", ["NO"]) == (0.0, 0.0)


def test_terms_mix_chinese_words_and_stemmed_english():
    t = terms("婚后在房产证上添加了妻子的名字. The Licensee shall not assign the licensing agreements")
    assert {"房产", "房产证", "妻子", "license", "agreement"} <= set(t)
    assert "the" not in t and "，" not in t


@pytest.mark.parametrize(
    ("text", "cut", "whole"),
    [
        ("人民币172,000元整", 6, "人民币172,000元"),  # a token boundary before the thousands
        ("共计3.5万元", 3, "共计3.5万元"),
        ("$1,250,000.", 2, "$1,250,000"),
        ("1,2,3", 1, "1"),  # a list, not thousands
        ("2016年", 4, "2016"),
        ("原告，2万元", 2, "原告"),  # not inside a number
    ],
)
def test_a_span_cut_inside_a_number_ends_with_the_number(text, cut, whole):
    assert text[: whole_number_end(text, cut)] == whole


def test_a_token_span_reads_as_its_characters_with_the_number_whole():
    text = "合同总价为人民币172,000元整。"  # tokens: 合同|总|价为|人民币|172|,|000|元整|。
    offsets = [(0, 2), (2, 3), (3, 5), (5, 8), (8, 11), (11, 12), (12, 15), (15, 17), (17, 18)]
    a, b = span_chars(text, offsets, (3, 4))
    assert text[a:b] == "人民币172,000元"
    assert span_chars(text, offsets, (0, 2)) == (0, 5)


@given(st.text(alphabet="0123456789,，.万亿元年a ", max_size=20), st.integers(0, 20))
def test_a_number_grows_only_over_its_own_rest(text, cut):
    cut = min(cut, len(text))
    end = whole_number_end(text, cut)
    assert cut <= end <= len(text)
    assert end == cut or (text[cut - 1].isdigit() and set(text[cut:end]) <= set("0123456789,，.万亿元"))


@given(st.lists(st.lists(st.integers(0, 30), unique=True, max_size=12), min_size=1, max_size=4))
def test_rrf_keeps_every_key_once_best_first(rankings):
    fused = rrf({f"a{i}": r for i, r in enumerate(rankings)})
    keys = [k for k, _, _ in fused]
    assert len(keys) == len(set(keys)) == len(set().union(*map(set, rankings)))
    scores = [s for _, s, _ in fused]
    assert scores == sorted(scores, reverse=True)


def test_bm25_finds_judged_cases_and_filters_hold(clcr_slice):
    out, gains, qids = clcr_slice
    cases = [json.loads(line) for line in open(out / "cases.jsonl", encoding="utf-8")]
    passages = []
    for i, c in enumerate(cases):
        for p in split_passages(c["id"], c["title"], c["text"], 400):
            p.kind = "criminal" if "刑事" in c["title"] else "civil"
            p.date = dt.date(2018, 1, 1) if i % 2 else dt.date(2020, 1, 1)
            passages.append(p)
    index = HybridIndex(passages)
    query = next(
        json.loads(line)["query"] for line in open(out / "q.jsonl") if json.loads(line)["task_id"] == 1
    )
    hits = index.search(query, k=10, level="document")
    assert len({h.doc_id for h in hits}) == len(hits) == 10
    relevant = {c for c, g in gains["1"].items() if g > 0}
    assert (
        len(relevant & {h.doc_id for h in hits}) >= 3
    )  # far above the ~1 a random order of this slice gives
    seg_hits = index.search(query, k=20, level="segment")
    assert all(h.segment_id.startswith(h.doc_id + ":") for h in seg_hits)
    only = {hits[3].doc_id}
    assert {h.doc_id for h in index.search(query, k=10, filters=Filters(doc_ids=only))} == only
    by_kind = index.search(query, k=50, filters=Filters(kinds={"criminal"}, date_to=dt.date(2019, 1, 1)))
    rows = [index.passages[index.row_of[h.segment_id]] for h in by_kind]
    assert rows and all(p.kind == "criminal" and p.date <= dt.date(2019, 1, 1) for p in rows)


def test_dense_minilm_arm_ranks_english_contract_clauses(shared_data):
    from retrieval.sentence import embed

    with gzip.open(shared_data / "en/contracts/cuad_contracts.jsonl.gz", "rt", encoding="utf-8") as f:
        contract = json.loads(f.readline())
    passages = split_passages("c0", "", contract["text"], 600)[:16]
    vecs = embed([p.text for p in passages])
    assert vecs.shape == (len(passages), 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    index = HybridIndex(passages)
    index.add_dense("minilm", MatrixArm(vecs, lambda q: embed([q])[0], len(passages)))
    # a passage's own text is its own nearest neighbour in the dense arm
    probe = passages[7].text
    top_row, _ = index.arm_top("minilm", probe, 1, None)
    assert top_row[0] == 7
    fused = index.search(probe, k=5, level="segment")
    assert fused[0].segment_id == "c0:7" and set(fused[0].ranks) == {"bm25", "minilm"}


def test_cli_eval_retrieval_json_on_a_clcr_slice(clcr_slice):
    from typer.testing import CliRunner

    from flows.cli import app

    out, _, _ = clcr_slice
    args = ["eval", "retrieval", "--corpus", str(out / "cases.jsonl"), "--queries", str(out / "q.jsonl")]
    res = CliRunner().invoke(
        app,
        [
            *args,
            "--qrels",
            str(out / "qrels.tsv"),
            "--dense-passages",
            "1",
            "--dense-model",
            "minilm",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    result = json.loads(res.stdout)  # stderr may carry the sentence model's loading progress
    assert result["n_queries"] == 2
    for arm in ("bm25", "minilm", "hybrid", "hybrid_equal"):
        assert set(result[arm]) == {"ndcg@10", "ndcg@30", "recall@100"}
        assert all(0.0 <= v <= 1.0 for v in result[arm].values())
    assert result["bm25"]["ndcg@10"] > 0.2
    bad = CliRunner().invoke(
        app, ["eval", "retrieval", "--corpus", str(out / "missing.jsonl"), "--queries", "q", "--qrels", "r"]
    )
    assert bad.exit_code != 0 and "no such file" in bad.output
    files = ["--corpus", str(out / "cases.jsonl"), "--queries", str(out / "q.jsonl"), "--qrels"]
    bad = CliRunner().invoke(
        app, ["eval", "retrieval", *files, str(out / "qrels.tsv"), "--dense-case", "max"]
    )
    assert bad.exit_code != 0 and "--dense-case" in bad.output


def test_dense_case_ranks_by_best_passage_or_by_mean_key():
    """Case A has one passage that is the query and three far from it; every passage of case B is
    close to it. By best passage A ranks first, by mean key B does."""
    e = np.eye(4, dtype=np.float32)
    vecs = np.stack([e[3], e[0], e[3], e[3], *(0.8 * e[0] + 0.6 * e[1],) * 3, e[2]])
    passages = [Passage(f"{d}:{i}", d, "") for d, n in (("A", 4), ("B", 3), ("C", 1)) for i in range(n)]
    rows = np.arange(len(passages))
    means, mean_rows = case_means(vecs, rows, passages)
    assert mean_rows.tolist() == [0, 4, 7]  # each case's key sits at its first passage
    np.testing.assert_allclose(np.linalg.norm(means, axis=1), 1, atol=1e-6)
    np.testing.assert_allclose(means[0], (e[0] + 3 * e[3]) / np.sqrt(10), atol=1e-6)
    index = HybridIndex(passages, bm25=False)
    index.add_dense("best", MatrixArm(vecs, lambda q: e[0], len(passages), rows))
    index.add_dense("mean", MatrixArm(means, lambda q: e[0], len(passages), mean_rows))
    by = {a: [h.doc_id for h in index.search("q", k=3, level="document", arms=[a])] for a in ("best", "mean")}
    assert by == {"best": ["A", "B", "C"], "mean": ["B", "A", "C"]}


def test_eval_reads_every_passage_and_mean_keys_on_request(clcr_slice, tmp_path):
    out, _, _ = clcr_slice
    few = tmp_path / "cases.jsonl"  # three cases: the sentence model reads every passage of each
    few.write_text("".join((out / "cases.jsonl").read_text(encoding="utf-8").splitlines(True)[:3]), "utf-8")
    files = (few, out / "q.jsonl", out / "qrels.tsv")
    cfg = RetrievalEvalConfig(dense_passages=0, dense_case="mean", dense_models=("minilm",))
    es = build_eval_set(*files, cfg)
    assert es.n_dense_passages == len(es.index.passages)  # 0: every passage of every case
    arm = es.index.dense["minilm"]
    assert len(arm.rows) == es.n_cases and len({es.index.passages[r].doc_id for r in arm.rows}) == es.n_cases
    with pytest.raises(ValueError, match="dense_case"):
        build_eval_set(*files, RetrievalEvalConfig(dense_case="max", dense_models=()))
