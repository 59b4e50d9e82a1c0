"""End-to-end reader fine-tuning: batched differentiable encoding equals the reader's own, the tuned layers
travel in the reader file and leave the index encoder alone, and the calibration measures behave."""

from __future__ import annotations

import json

import pytest
import tiny_models
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.records import BlockType
from pipeline.tokenizer import load_tokenizer
from retrieval.encoder import sha256_file
from retrieval.eval.qa import in_split
from retrieval.reader import train
from retrieval.reader.finetune import (
    FinetuneConfig,
    expected_calibration_error,
    finetune_reader,
    fit_calibration,
)
from retrieval.reader.runtime import (
    Reader,
    ReaderConfig,
    ReaderHead,
    encode_states,
    encode_text,
    load_reader,
    tokenize,
)
from retrieval.reader.train import is_validation
from txl.checkpoint import save_model

TOK = load_tokenizer()
MODEL = tiny_models.tiny_encoder(TOK, mem_len=24)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 70), min_size=1, max_size=4), st.integers(0, 10**6))
def test_batched_states_equal_one_text_at_a_time(lengths, seed):
    """Texts of any lengths, several segments each (16-token segments), read in one padded batch."""
    g = torch.Generator().manual_seed(seed)
    vocab = TOK.hf.get_vocab_size()
    texts = [torch.randint(300, vocab, (n,), generator=g).tolist() for n in lengths]
    with torch.no_grad():
        batch = encode_states(MODEL, TOK, texts, BlockType.FACTS, seg_tokens=16)
        for ids, states in zip(texts, batch, strict=True):
            alone = encode_states(MODEL, TOK, [ids], BlockType.FACTS, seg_tokens=16)[0]
            assert states.shape == (len(ids), MODEL.cfg.d_model)
            assert torch.allclose(states, alone, atol=1e-5)


def test_encode_text_is_the_batched_path():
    text = "原告丁天荣与其所属旗杆村委会签订了农村土地家庭承包合同书。" * 4
    enc = encode_text(MODEL, TOK, text, seg_tokens=16)
    with torch.no_grad():
        (states,) = encode_states(MODEL, TOK, [tokenize(TOK, text).ids], seg_tokens=16)
    assert torch.equal(enc.hidden, states)
    assert enc.ids == tokenize(TOK, text).ids


def test_states_carry_gradients_to_the_layers_only():
    model = tiny_models.tiny_encoder(TOK, mem_len=24).train()
    (states,) = encode_states(model, TOK, [list(range(300, 340))], seg_tokens=16)
    states.sum().backward()
    assert model.layers[0].attn.qkv.weight.grad is not None
    assert model.layers[0].attn.qkv.weight.grad.abs().sum() > 0


def test_calibration_error_and_temperature():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(6000, 4, generator=g)
    gold = torch.multinomial(torch.softmax(base, -1), 1, generator=g).squeeze(-1)
    calibrated = expected_calibration_error(torch.softmax(base, -1), gold)
    over = expected_calibration_error(torch.softmax(3 * base, -1), gold)
    assert calibrated < 0.03 < over
    temperature, bias = fit_calibration(3 * base + torch.tensor([2.0, 0.0, 0.0, 0.0]), gold)
    assert 2.5 <= temperature <= 3.5
    assert abs((bias[0] - bias[1]) + 2.0 / temperature) < 0.15  # the shift undone
    assert abs(sum(bias)) < 1e-3


@pytest.fixture(scope="module")
def qa_file(shared_data, tmp_path_factory):
    """Two training contexts (one in the validation tenth) and one held-apart context of CJRC."""
    data = json.loads((shared_data / "zh/qa/cjrc_dev.json").read_text(encoding="utf-8"))
    pars = [p for a in data["data"] for p in a["paragraphs"]]
    train = [p for p in pars if in_split(p["context"], "train")]
    picked = [next(p for p in train if is_validation(p["context"]))]
    picked += [next(p for p in train if not is_validation(p["context"]))]
    picked += [next(p for p in pars if in_split(p["context"], "heldout"))]
    path = tmp_path_factory.mktemp("qa") / "cjrc3.json"
    path.write_text(json.dumps({"data": [{"paragraphs": picked}]}, ensure_ascii=False), encoding="utf-8")
    return path


def test_finetune_writes_tuned_layers_and_leaves_the_encoder(qa_file, tmp_path):
    base = tiny_models.tiny_encoder(TOK, mem_len=128)
    ckpt = tmp_path / "tiny.pt"
    save_model(ckpt, base)
    init = tmp_path / "head.pt"
    Reader(ReaderHead(ReaderConfig(base.cfg.d_model)), base, TOK).save(init, sha256_file(ckpt), {})
    out = tmp_path / "reader.pt"
    cfg = FinetuneConfig(epochs=2, eval_every=1, patience=5, contexts_per_batch=1, encoder_lr=1e-2)
    metrics = finetune_reader(qa_file, out, init, str(ckpt), cfg=cfg)
    assert metrics["heldout"]["n_questions"] > 0
    assert 0.0 <= metrics["calibration"]["heldout_after"]["ece"] <= 1.0
    assert metrics["calibration"]["temperature"] > 0
    assert metrics["train_log"] and all("f1" in row for row in metrics["train_log"])

    reader = load_reader(out, base, TOK, sha256_file(ckpt))
    assert reader.tuned and not any(k.startswith(("emb.", "crit.")) for k in reader.tuned)
    assert reader.model is not base  # a tuned copy reads; the encoder given is left as it was
    name = "layers.0.attn.qkv.weight"
    assert torch.equal(base.state_dict()[name], tiny_models.tiny_encoder(TOK).state_dict()[name])
    assert not torch.allclose(reader.model.state_dict()[name], base.state_dict()[name])
    assert torch.equal(
        reader.model.state_dict()["emb.layers.0.weight"], base.state_dict()["emb.layers.0.weight"]
    )


def test_training_cache_holds_tensors_and_gives_the_same_examples(qa_file, tmp_path, monkeypatch):
    """The head-only training's state cache: the second call rebuilds the examples from the file as tokens
    and fills in the cached states (a weights-only tensor file, nothing unpickled)."""
    monkeypatch.setattr(train, "CACHE_DIR", tmp_path)
    model = tiny_models.tiny_encoder(TOK, mem_len=128)
    built = []

    def build(m):
        built.append(m)
        return train.build_examples(qa_file, m, TOK, "train")

    first = train.cached("key", build, model)
    again = train.cached("key", build, model)
    assert built == [model, None]  # the second call never encoded
    (cache,) = tmp_path.iterdir()
    assert isinstance(torch.load(cache, weights_only=True), list)
    assert [e.item.qid for e in first] == [e.item.qid for e in again]
    for a, b in zip(first, again, strict=True):
        assert torch.equal(a.ctx.hidden, b.ctx.hidden) and torch.equal(
            a.question.enc.hidden, b.question.enc.hidden
        )
        assert torch.equal(a.lex, b.lex) and a.span == b.span
