"""The yes-no decider: its inputs read negation where the context answers the question, it round-trips
through polar.json, it is used only with the reader it was fitted on, a reader with it answers yes-no
questions YES / NO / none only, and the shipped one beats the head's own choice on held-apart CJRC."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tiny_models
import torch

from pipeline.errors import CorruptDocument
from pipeline.records import sha256_file
from pipeline.tokenizer import load_tokenizer
from retrieval.reader.polar import (
    N_FEATURES,
    POLAR_LABELS,
    PolarHead,
    bigram_features,
    polar_features,
    polar_file,
)
from retrieval.reader.runtime import Reader, ReaderConfig, ReaderHead, encode_text

CONTEXT = "原告与被告签订买卖合同，约定货款十万元。原告依约交付货物，被告至今未支付货款。"


def test_the_answering_clause_s_negation_is_read_against_the_question_s():
    paid = polar_features("被告是否支付了货款？", CONTEXT, [0.0, 0.0, 0.0])
    delivered = polar_features("原告是否交付了货物？", CONTEXT, [0.0, 0.0, 0.0])
    assert len(paid) == len(delivered) == N_FEATURES
    # the clause holding the question's words negates it (未支付) for the first question, not the second
    assert paid[5] >= 1 and paid[7] == 1.0 and paid[9] == 1.0
    assert delivered[5] == 0 and delivered[7] == 0.0 and delivered[9] == 0.0
    # read by bigrams: the negation stands right before 支付 in the answering clause
    assert paid[13] == 1.0 and paid[14] == 1.0 and delivered[13] == 0.0 and delivered[14] == 0.0
    unrelated = polar_features("被告是否驾驶机动车？", CONTEXT, [0.0, 0.0, 0.0])
    assert unrelated[4] < paid[4] and unrelated[10] < paid[10]  # the context holds less of that question
    # a question that negates itself, answered by a clause that does not: exactly one of the two negates
    unpaid = polar_features("被告是否未支付货款？", "被告已支付货款。", [0.0, 0.0, 0.0])
    assert unpaid[13] == 0.0 and unpaid[14] == 1.0


def test_bigram_features_of_a_question_with_nothing_to_match():
    assert bigram_features("？", ["被告已支付货款"]) == [0.0] * 6
    one = bigram_features("支付货款", ["被告已支付货款"])
    assert one[0] == one[2] == 1.0 and one[1] == 0.0  # one clause: no second best


def _rows():
    rows = []
    for n in range(30):
        rows.append(("被告是否支付了货款？", CONTEXT, [1.0, 0.0, 0.0], "NO"))
        rows.append(("原告是否交付了货物？", CONTEXT, [1.0, 0.0, 0.0], "YES"))
        rows.append(("被告是否驾驶机动车？", CONTEXT, [0.5, 0.0, 0.5 + n / 100], "NONE"))
    return rows


def test_a_fitted_decider_round_trips_and_tells_the_three_apart(tmp_path):
    polar = PolarHead.fit(_rows(), "abc")
    for question, label in [("被告是否支付了货款？", "NO"), ("原告是否交付了货物？", "YES")]:
        assert POLAR_LABELS[int(polar.log_probs(question, CONTEXT, [1.0, 0.0, 0.0]).argmax())] == label
    lp = polar.log_probs("被告是否支付了货款？", CONTEXT, [1.0, 0.0, 0.0])
    assert np.exp(lp).sum() == pytest.approx(1.0)
    polar.save(tmp_path / "polar.json")
    again = PolarHead.load(tmp_path / "polar.json")
    assert again == polar
    with pytest.raises(ValueError, match="YES, NO and no-answer"):
        PolarHead.fit([r for r in _rows() if r[3] != "NONE"], "abc")


def test_the_decider_is_used_only_with_the_reader_it_was_fitted_on(tmp_path):
    reader_file = tmp_path / "reader.pt"
    reader_file.write_bytes(b"one reader")
    assert PolarHead.beside(reader_file) is None  # none kept
    PolarHead.fit(_rows(), sha256_file(reader_file)).save(polar_file(reader_file))
    assert PolarHead.beside(reader_file) is not None
    reader_file.write_bytes(b"another reader")
    assert PolarHead.beside(reader_file) is None
    # one fitted on fewer inputs than this code reads (before the bigram features) is not used either
    reader_file.write_bytes(b"one reader")
    assert PolarHead.beside(reader_file) is not None
    stale = json.loads(polar_file(reader_file).read_text(encoding="utf-8"))
    stale["coef"] = [row[:10] for row in stale["coef"]]
    polar_file(reader_file).write_text(json.dumps(stale), encoding="utf-8")
    assert PolarHead.beside(reader_file) is None
    polar_file(reader_file).write_text("{not json", encoding="utf-8")
    with pytest.raises(CorruptDocument, match="polar.json"):
        PolarHead.beside(reader_file)


def test_a_reader_with_the_decider_answers_yes_no_questions_by_it():
    tok = load_tokenizer()
    model = tiny_models.tiny_encoder(tok, mem_len=128)
    reader = Reader(ReaderHead(ReaderConfig(model.cfg.d_model)).eval(), model, tok)
    reader.polar = PolarHead.fit(_rows(), "abc")
    ctx = encode_text(model, tok, CONTEXT)
    questions = [reader.question(q) for q in ("被告是否支付了货款？", "原告是否交付了货物？", "货款是多少？")]
    with torch.no_grad():
        no, yes, amount = reader.read_many(CONTEXT, ctx, questions)
    assert (no.label, yes.label) == ("NO", "YES")
    assert amount.label in ("SPAN", "NONE")  # not a yes-no question: the head decides, among its types


def test_the_shipped_decider_beats_the_head_s_choice(shared_data):
    """`ldx train polar` on the shipped reader: validation accuracy above the head's (polar.json)."""
    from retrieval.reader.runtime import READER_FILE

    polar = PolarHead.beside(READER_FILE)
    assert polar is not None, "data/models/polar.json missing or fitted on another reader"
    m = json.loads(polar_file(READER_FILE).read_text(encoding="utf-8"))["metrics"]
    assert m["validation_accuracy"] > m["validation_accuracy_head"] + 0.05


def test_polar_rows_read_the_training_or_the_held_apart_split_only(tmp_path):
    from retrieval.reader.train_polar import polar_rows

    # "all" would file held-apart contexts under train, where the decider is fitted
    with pytest.raises(ValueError, match="'train' or 'heldout'"):
        polar_rows(None, tmp_path / "qa.json", "all")
