"""QA scoring and loading (CJRC, the multi-span set, CUAD) and CUAD's precision-recall metric."""

from __future__ import annotations

import pytest

from retrieval.eval.cuad import aupr, jaccard, load_cuad, word_f1
from retrieval.eval.qa import QAItem, load_squad, score


def test_score_gives_full_marks_to_gold_and_counts_each_type():
    items = [
        QAItem("1", "?", ["夫妻感情破裂", "因夫妻感情破裂"], False),
        QAItem("2", "?", ["YES"], False),
        QAItem("3", "?", [""], True),
    ]
    perfect = score({"1": "因夫妻感情破裂", "2": "YES", "3": ""}, items)
    assert perfect["em"] == perfect["f1"] == perfect["yes_no_acc"] == perfect["no_answer_acc"] == 100.0
    wrong = score({"1": "感情", "2": "NO", "3": "800元"}, items)
    assert wrong["yes_no_acc"] == wrong["no_answer_acc"] == 0.0 and 0 < wrong["span_f1"] < 100
    assert wrong["counts"] == {"span": 1, "yes_no": 1, "no_answer": 1}


def test_held_apart_split_is_fixed_and_disjoint(shared_data):
    path = shared_data / "zh/qa/cjrc_dev.json"
    held = {c for c, _ in load_squad(path, "heldout")}
    train = {c for c, _ in load_squad(path, "train")}
    assert not held & train and 0.15 < len(held) / (len(held) + len(train)) < 0.25


def test_multispan_answers_become_joined_golds(shared_data):
    context, items = next(load_squad(shared_data / "zh/qa/cjrc3_multispan.json"))
    gold = items[0].golds[0]
    assert gold == "2.16亩本村四组联组长"  # the first question's two spans, in order
    assert score({items[0].qid: gold}, items[:1])["em"] == 100.0


def test_not_a_squad_file_is_a_typed_error(tmp_path):
    from pipeline.errors import CorruptDocument

    bad = tmp_path / "x.json"
    bad.write_text('{"data": [{"paragraphs": [{"qas": []}]}]}', encoding="utf-8")
    with pytest.raises(CorruptDocument, match="x.json: not a SQuAD-2.0 layout"):
        list(load_squad(bad))


def test_cuad_split_is_by_contract(shared_data):
    held = load_cuad(shared_data / "en/contracts", "heldout", limit=5)
    train = load_cuad(shared_data / "en/contracts", "train", limit=20)
    assert len(held) == 5 and not {c.doc_id for c in held} & {c.doc_id for c in train}
    assert all(len(c.questions) == 41 for c in held)
    answered = [q for c in held for q in c.questions if q.golds]
    assert answered and all(g in c.text for c in held for q in c.questions for g in q.golds)


def test_word_f1_and_jaccard():
    assert word_f1("The Governing Law.", "governing law") == 1.0
    assert word_f1("", "") == 1.0 and word_f1("x", "") == 0.0
    assert jaccard("laws of the State of New York", "State of New York") == pytest.approx(
        4 / 5
    )  # "the" dropped, "of" counted once


def test_aupr_ranks_answers_by_confidence():
    # 3 answerable questions; confident answers right first, then a wrong one
    area, p80 = aupr([(0.9, True), (0.8, True), (0.7, False), (0.6, True)], n_answerable=3)
    assert area == pytest.approx((1 + 1 + 0.75) / 3)
    assert p80 == pytest.approx(0.75)
    worse, _ = aupr([(0.9, False), (0.8, True), (0.7, True), (0.6, True)], n_answerable=3)
    assert worse < area
    assert aupr([], 3) == (0.0, None)


def test_cli_eval_cuad_on_one_held_apart_contract(shared_data, torch_one_thread, tmp_path):
    import json

    from typer.testing import CliRunner

    from flows.cli import app

    data = shared_data / "en/contracts"
    res = CliRunner().invoke(
        app, ["eval", "cuad", "--data", str(data), "--contracts", "1", "--k", "3", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    contract = load_cuad(data, "heldout", 1)[0]
    assert out["contracts"] == 1 and out["questions"] == 41
    assert out["answerable"] == sum(1 for q in contract.questions if q.golds)
    recalls = [v for v in out["segment_recall"].values() if v is not None]
    assert recalls == sorted(recalls) and all(0 <= v <= 1 for v in recalls)  # recall@k grows with k
    for name in ("reader", "baseline"):
        assert 0 <= out[name]["aupr"] <= 1 and 0 <= out[name]["span_f1"] <= 100
    assert out["baseline"]["answers_given"] == 41 and out["reader"]["answers_given"] <= 41
    # the shipped clause head on the same questions
    assert out["clauses"]["questions"] == 41 and out["clauses"]["answerable"] == out["answerable"]
    assert 0 <= out["clauses"]["aupr"] <= 1
    missing = CliRunner().invoke(
        app, ["eval", "cuad", "--data", str(data), "--clauses", str(data / "none.npz")]
    )
    assert missing.exit_code != 0 and "none.npz" in missing.output
    garbage = tmp_path / "clauses.npz"
    garbage.write_bytes(b"not a zip")
    broken = CliRunner().invoke(app, ["eval", "cuad", "--data", str(data), "--clauses", str(garbage)])
    assert broken.exit_code != 0 and "not a clause head" in broken.output
    bad = CliRunner().invoke(app, ["eval", "cuad", "--data", str(data), "--split", "dev"])
    assert bad.exit_code != 0 and "--split" in bad.output
