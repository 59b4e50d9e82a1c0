"""Retrieved memory while training: each lane's own evicted windows come back as the model's retrieved slots."""

from __future__ import annotations

import pytest
import torch
from tiny_models import TINY_TXL

from txl.corpora import LMCorpus, prepare
from txl.train import TrainConfig, Trainer
from txl.windows import PastWindows

TINY = {**TINY_TXL, "cutoffs": [2000, 8000]}

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def data_dir(shared_data, tmp_path_factory):
    """Real criminal judgments (thousands of tokens each, so a lane stays in one document for many steps)."""
    out = tmp_path_factory.mktemp("lm_data")
    corpus = LMCorpus("zh_criminal", "zh/judgments/judge_criminal.jsonl.gz", text_field="fd")
    prepare(out, shared_data, (corpus,), holdout=0.5, max_docs=5, log=lambda _: None)
    return out


def _cfg(data_dir, out, **kw) -> TrainConfig:
    base = dict(
        data_dir=str(data_dir),
        out_dir=str(out),
        model={**TINY, "dropout": 0.0},
        seg_len=32,
        mem_len=32,
        batch_size=2,
        max_steps=5,
        warmup_steps=2,
        lr=2e-3,
        eval_every=5,
        eval_docs_per_corpus=1,
        eval_tokens_per_corpus=600,
        log_every=1,
        ckpt_every=100,
        threads=1,
        seed=5,
        plot=False,
    )
    return TrainConfig(**{**base, **kw})


def test_injection_starts_once_windows_leave_the_memory_and_changes_training(data_dir, tmp_path):
    trainer = Trainer(_cfg(data_dir, tmp_path / "inject", inject_k=2, inject_states=8))
    assert min(trainer.stream.n_windows) > 5  # no lane changes document during the run
    records = trainer.run(resume=False)
    train = [r for r in records if r["kind"] == "train"]
    # window 1 has no query yet, window 2's only predecessor is still in memory (mem_len = seg_len);
    # then 1, then 2 evicted windows per lane, each as 8 pooled slots
    assert [r["retrieved_slots"] for r in train] == [0, 0, 2 * 8, 2 * 16, 2 * 16]
    bank = trainer.banks[0]
    assert (
        len(bank.keys) == 5 and bank.states[0].shape == (2, 8, 32) and bank.states[0].dtype == torch.float16
    )
    assert all(abs(float(k.norm()) - 1) < 1e-4 for k in bank.keys)
    evals = [r for r in records if r["kind"] == "eval"][0]
    assert {k.split("/")[0] for k in evals} >= {"ppl", "retrieved_ppl", "bpc", "retrieved_bpc"}

    plain = Trainer(_cfg(data_dir, tmp_path / "plain")).run(resume=False)
    losses = [r["loss"] for r in plain if r["kind"] == "train"]
    assert [r["retrieved_slots"] for r in plain if r["kind"] == "train"] == [0] * 5
    # same seed and data: identical until the first retrieved slots reach the model, different after
    assert [r["loss"] for r in train][:2] == losses[:2] and train[2]["loss"] != losses[2]


def test_injection_at_one_layer_keeps_and_reads_that_layer_alone(data_dir, tmp_path):
    runs = {}
    for layers in (None, [-1]):
        trainer = Trainer(
            _cfg(data_dir, tmp_path / f"inject{layers}", inject_k=2, inject_states=8, inject_layers=layers)
        )
        runs[str(layers)] = [r for r in trainer.run(resume=False) if r["kind"] == "train"]
    bank = trainer.banks[0]
    assert bank.layers == (1,) and bank.states[0].shape == (1, 8, 32)  # the top layer of two, alone
    one, every = runs["[-1]"], runs["None"]
    assert [r["retrieved_slots"] for r in one] == [r["retrieved_slots"] for r in every]
    assert [r["loss"] for r in one][:2] == [r["loss"] for r in every][:2] and one[2]["loss"] != every[2][
        "loss"
    ]


def test_pooled_windows_pick_similar_evicted_windows_in_reading_order():
    bank = PastWindows(pool=4, max_windows=3)
    torch.manual_seed(0)
    keys = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    for i, key in enumerate(keys):
        states = [torch.full((10, 8), float(i)) for _ in range(3)]  # n_layer + 1 entries of [n, d]
        bank.add(key, states, torch.arange(10))
    assert len(bank.keys) == 3  # the oldest window was dropped
    picked = bank.pick(keys[1], k=2, memory_tokens=10)  # windows 1 and 2 are candidates, 3 is in memory
    assert [float(layers[0][0, 0]) for layers, _ in picked] == [1.0, 2.0]
    layers, types = picked[0]
    assert len(layers) == 2 and layers[0].shape == (4, 8) and types.tolist() == [0, 3, 6, 8]
    assert bank.pick(keys[0], k=2, memory_tokens=30) == []
