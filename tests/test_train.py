"""The trainer: exact resume, a tiny model that really learns, gradient accumulation and DDP (gloo, 2
processes) equal to one process with the combined batch, and the eval numbers it reports."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tiny_models import TINY_TXL

from txl.corpora import LMCorpus, prepare
from txl.train import STATE_FILE, TrainConfig, Trainer, load_state, lr_factor, memory_len

ROOT = Path(__file__).resolve().parents[1]
TINY = {**TINY_TXL, "cutoffs": [2000, 8000]}


pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def data_dir(shared_data, tmp_path_factory):
    """A prepared stream folder of real documents: 6 criminal judgments and 4 mixed court documents."""
    out = tmp_path_factory.mktemp("lm_data")
    corpora = (
        LMCorpus("zh_criminal", "zh/judgments/judge_criminal.jsonl.gz", text_field="fd"),
        LMCorpus("zh_wenshu", "zh/judgments/wenshu_mixed.jsonl"),
    )
    manifest = prepare(out, shared_data, corpora, holdout=0.3, max_docs=6, log=lambda _: None)
    assert all(manifest["stats"][c.name]["documents"] == 6 for c in corpora)
    return out


def _cfg(data_dir, out, **kw) -> TrainConfig:
    base = dict(
        data_dir=str(data_dir),
        out_dir=str(out),
        model={**TINY, "dropout": 0.1},
        seg_len=32,
        mem_len=32,
        batch_size=4,
        max_steps=8,
        warmup_steps=2,
        lr=2e-3,
        eval_every=0,
        log_every=1,
        ckpt_every=100,
        threads=1,
        seed=3,
        plot=False,
    )
    return TrainConfig(**{**base, **kw})


def _losses(records):
    return [r["loss"] for r in records if r["kind"] == "train"]


def test_resume_equals_an_uninterrupted_run(data_dir, tmp_path):
    full = Trainer(_cfg(data_dir, tmp_path / "full")).run(resume=False)
    part = tmp_path / "part"
    Trainer(_cfg(data_dir, part)).run(resume=False, stop_after=3)
    assert load_state(part / STATE_FILE)["step"] == 3
    resumed = Trainer(_cfg(data_dir, part, plot=True)).run(resume=True)  # a fresh trainer, as after a restart
    assert _losses(resumed) == _losses(full) and len(_losses(full)) == 8
    a = load_state(tmp_path / "full" / STATE_FILE)
    b = load_state(part / STATE_FILE)
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    assert (part / "curves.png").stat().st_size > 1000 and (part / "metrics.csv").exists()


def test_tiny_model_overfits_a_real_document(data_dir, tmp_path):
    """One short real judgment, read again and again: the loop must drive its loss near zero."""
    from txl.streams import load_corpus, save_corpus

    doc = max(
        (d for d in load_corpus(data_dir / "zh_wenshu", "train") if len(d.ids) <= 400),
        key=lambda d: len(d.ids),
    )
    one = tmp_path / "one"
    one.mkdir()
    save_corpus(one / "doc", [doc], [False], {})
    manifest = json.loads((data_dir / "manifest.json").read_text())
    (one / "manifest.json").write_text(json.dumps({**manifest, "corpora": ["doc"]}))
    model = {
        **TINY,
        "d_model": 128,
        "n_head": 4,
        "d_head": 32,
        "d_inner": 256,
        "dropout": 0.0,
        "pre_lnorm": True,
    }
    cfg = _cfg(
        one,
        tmp_path / "run",
        model=model,
        seg_len=128,
        mem_len=128,
        batch_size=1,
        max_steps=140,
        warmup_steps=10,
        lr=2e-3,
        min_lr_ratio=0.3,
        log_every=10,
    )
    losses = _losses(Trainer(cfg).run(resume=False))
    assert losses[0] > 5 and losses[-1] < 0.3, (len(doc.ids), losses)


def test_accumulation_over_lane_chunks_equals_the_full_batch(data_dir, tmp_path):
    one = Trainer(_cfg(data_dir, tmp_path / "a", model={**TINY, "dropout": 0.0}))
    two = Trainer(_cfg(data_dir, tmp_path / "b", model={**TINY, "dropout": 0.0}, accum_steps=2))
    for _ in range(3):
        m1 = one.train_step(one.stream.next_batch())
        m2 = two.train_step(two.stream.next_batch())
        assert math.isclose(m1["loss"], m2["loss"], rel_tol=1e-5)
    for p, q in zip(one.module.parameters(), two.module.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-6)


def test_ddp_two_processes_equal_one_process(data_dir, tmp_path):
    """torchrun with gloo and 2 processes (2 lanes each) == one process with the 4 lanes."""
    common = [
        f"data_dir={json.dumps(str(data_dir))}",
        f"model={json.dumps({**TINY, 'dropout': 0.0})}",
        "seg_len=32",
        "mem_len=32",
        "batch_size=4",
        "max_steps=4",
        "warmup_steps=2",
        "lr=0.002",
        "eval_every=0",
        "threads=1",
        "seed=5",
        "ckpt_every=100",
        "log_every=1",
        "plot=false",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node=2",
        "--master-port=29617",
        "-m",
        "flows",
        "train",
        "run",
    ]
    cmd += [
        arg for item in [*common, f"out_dir={json.dumps(str(tmp_path / 'ddp'))}"] for arg in ("--set", item)
    ]
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=100)
    assert run.returncode == 0, run.stderr[-2000:]
    single = Trainer(_cfg(data_dir, tmp_path / "one", model={**TINY, "dropout": 0.0}, max_steps=4, seed=5))
    records = single.run(resume=False)
    ddp_state = load_state(tmp_path / "ddp" / STATE_FILE)
    one_state = load_state(tmp_path / "one" / STATE_FILE)
    for k, v in one_state["model"].items():
        torch.testing.assert_close(ddp_state["model"][k], v, rtol=1e-4, atol=1e-6, msg=k)
    ddp_losses = _losses(
        json.loads(ln) for ln in (tmp_path / "ddp" / "metrics.jsonl").read_text().splitlines()
    )
    assert all(math.isclose(a, b, rel_tol=1e-5) for a, b in zip(ddp_losses, _losses(records), strict=True))
    # the checkpoint holds every rank's lanes of memory
    assert ddp_state["memory"]["mems"][0].size(0) == 4


def test_schedules():
    cfg = TrainConfig(
        max_steps=100, warmup_steps=10, min_lr_ratio=0.1, mem_len=100, evict=True, evict_min_frac=0.25
    )
    assert lr_factor(0, cfg) == pytest.approx(0.1) and lr_factor(9, cfg) == pytest.approx(1.0)
    assert lr_factor(100, cfg) == pytest.approx(0.1) and lr_factor(55, cfg) == pytest.approx(0.55)
    assert [memory_len(s, cfg) for s in (0, 29, 50, 70, 99)] == [100, 100, 62, 25, 25]
    assert memory_len(99, cfg.model_copy(update={"evict": False})) == 100
