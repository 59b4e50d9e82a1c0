"""The reader head and `ldx eval qa` on real CJRC contexts, with a tiny randomly initialised encoder."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from pipeline.tokenizer import load_tokenizer
from retrieval.encoder import sha256_file
from retrieval.eval_qa import QAItem, in_split, load_squad, score
from retrieval.reader import Reader, best_span, char_to_token_span, encode_text
from retrieval.train_reader import build_examples, train_head
from txl.checkpoint import save_model
from txl.model import TransformerXLConfig, TransformerXLLM


@pytest.fixture(scope="module")
def cjrc_small(shared_data, tmp_path_factory):
    """Four CJRC dev contexts written as their own SQuAD-2.0 file (2 of the train split, 2 held apart)."""
    data = json.loads((shared_data / "zh/qa/cjrc_dev.json").read_text(encoding="utf-8"))
    pars = [p for a in data["data"] for p in a["paragraphs"]]
    train = [p for p in pars if in_split(p["context"], "train")][:2]
    held = [p for p in pars if in_split(p["context"], "heldout")][:2]
    path = tmp_path_factory.mktemp("qa") / "cjrc_small.json"
    path.write_text(json.dumps({"data": [{"paragraphs": train + held}]}, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    tok = load_tokenizer()
    torch.manual_seed(0)
    cfg = TransformerXLConfig(vocab_size=tok.hf.get_vocab_size(), d_model=32, n_layer=2, n_head=2, d_head=16,
                              d_inner=64, mem_len=128, cutoffs=[], dropout=0.0)
    model = TransformerXLLM(cfg).eval()
    path = tmp_path_factory.mktemp("enc") / "tiny.pt"
    save_model(path, model)
    return model, tok, path


def test_score_gives_full_marks_to_gold_and_counts_each_type():
    items = [QAItem("1", "?", ["夫妻感情破裂", "因夫妻感情破裂"], False), QAItem("2", "?", ["YES"], False),
             QAItem("3", "?", [""], True)]
    perfect = score({"1": "因夫妻感情破裂", "2": "YES", "3": ""}, items)
    assert perfect["em"] == perfect["f1"] == perfect["yes_no_acc"] == perfect["no_answer_acc"] == 100.0
    wrong = score({"1": "感情", "2": "NO", "3": "800元"}, items)
    assert wrong["yes_no_acc"] == wrong["no_answer_acc"] == 0.0 and 0 < wrong["span_f1"] < 100


def test_held_apart_split_is_fixed_and_disjoint(shared_data):
    path = shared_data / "zh/qa/cjrc_dev.json"
    held = {c for c, _ in load_squad(path, "heldout")}
    train = {c for c, _ in load_squad(path, "train")}
    assert not held & train and 0.15 < len(held) / (len(held) + len(train)) < 0.25


def test_context_states_align_with_answer_spans(cjrc_small, tiny_encoder):
    model, tok, _ = tiny_encoder
    context, qas = next(load_squad(cjrc_small))
    ctx = encode_text(model, tok, context, seg_tokens=64)  # several segments with memory
    assert ctx.hidden.shape == (len(ctx.offsets), 32)
    gold = next(q.golds[0] for q in qas if q.golds[0] not in ("", "YES", "NO"))
    a = context.find(gold)
    s, e = char_to_token_span(ctx.offsets, a, a + len(gold))
    assert gold in context[ctx.offsets[s][0] : ctx.offsets[e][1]]
    start = torch.full((10,), -50.0)
    end = torch.full((10,), -50.0)
    start[3], end[6], end[1] = 2.0, 1.0, 9.0  # end before start is not a span
    assert best_span(start, end)[:2] == (3, 6)


def test_trained_head_and_cli_eval_qa_json(cjrc_small, tiny_encoder, tmp_path):
    from flows.cli import app

    model, tok, ckpt = tiny_encoder
    examples = build_examples(cjrc_small, model, tok, None)
    assert {label for _, _, label, _ in examples} >= {"SPAN", "NONE"}
    head = train_head(examples, 32, epochs=2)
    reader_path = tmp_path / "reader.pt"
    Reader(head, model, tok).save(reader_path, sha256_file(ckpt), {})
    args = ["eval", "qa", str(cjrc_small), "--split", "heldout", "--reader", str(reader_path), "--json"]
    res = CliRunner().invoke(app, [*args, "--set", f"model.checkpoint={ckpt}"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["split"] == "heldout" and out["n_questions"] == sum(len(q) for _, q in load_squad(cjrc_small, "heldout"))
    for m in ("em", "f1", "yes_no_acc", "no_answer_acc"):
        assert 0.0 <= out[m] <= 100.0
    bad = CliRunner().invoke(app, ["eval", "qa", str(cjrc_small), "--split", "dev"])
    assert bad.exit_code != 0 and "--split" in bad.output
