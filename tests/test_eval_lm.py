"""LM evaluation: the numbers add up, the settings differ where they should and agree where they must,
and `ldx eval lm` reads real files."""

from __future__ import annotations

import json
import math

import pytest
import torch
from typer.testing import CliRunner

from txl import TransformerXLConfig, TransformerXLLM
from txl.corpora import LMCorpus, encode_corpus
from txl.evaluate import evaluate_lm
from txl.recurrence import run_batch
from txl.streams import IGNORE, LaneStream

TINY = dict(
    vocab_size=16384,
    d_model=32,
    n_layer=2,
    n_head=2,
    d_head=16,
    d_inner=64,
    cutoffs=[2000, 8000],
    dropout=0.0,
    mem_len=32,
)


pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def setup(shared_data):
    from pipeline.tokenizer import load_tokenizer

    tok = load_tokenizer()
    corpus = LMCorpus("zh_wenshu", "zh/judgments/wenshu_mixed.jsonl")
    docs, _, _ = encode_corpus(corpus, shared_data, tok, 0.05, 0, max_docs=3)
    torch.manual_seed(0)
    model = TransformerXLLM(TransformerXLConfig(**TINY)).eval()
    # a trained-looking model: random tag biases and connective boosts, so withholding them matters
    with torch.no_grad():
        for blk in model.layers:
            blk.attn.tag_bias.normal_(0, 1.0)
            blk.attn.boost.fill_(2.0)
    return docs, model, torch.tensor(sorted(tok.special_ids))


def test_numbers_add_up_and_memory_off_is_windows_alone(setup):
    docs, model, special = setup
    res = evaluate_lm(model, docs, 32, settings=("none", "memory"), special=special, n_lanes=3)
    # memory off == every window evaluated on its own, summed by hand
    nll, n = 0.0, 0
    with torch.no_grad():
        for batch in LaneStream(docs, 1, 32, shuffle=False):
            out = run_batch(model, batch, torch.device("cpu"))
            scored = (batch.targets != IGNORE) & ~torch.isin(batch.targets, special)
            nll += float(out.nll[scored].sum())
            n += int(scored.sum())
    a = res["none"]["all"]
    assert a["tokens"] == n and math.isclose(a["nll"] * n, nll, rel_tol=1e-4)
    assert a["chars"] == sum(d.n_chars for d in docs)
    assert math.isclose(a["bpc"], nll / math.log(2) / a["chars"], rel_tol=1e-4)
    assert math.isclose(a["ppl"], math.exp(a["nll"]), rel_tol=1e-9)
    assert res["memory"]["all"]["tokens"] == n and res["memory"]["all"]["nll"] != a["nll"]
    assert 0 < a["after_connective"]["tokens"] < n


def test_retrieved_memory_changes_only_what_left_the_memory(setup):
    docs, model, special = setup
    short = [d for d in docs if len(d.ids) <= 2 * 32 + 1]  # at most two windows: nothing is ever evicted
    if short:
        r = evaluate_lm(model, short, 32, settings=("memory", "retrieved"), special=special, n_lanes=2)
        assert r["memory"]["all"]["nll"] == r["retrieved"]["all"]["nll"]
    long = [d for d in docs if len(d.ids) > 4 * 32]
    r = evaluate_lm(model, long, 32, settings=("memory", "retrieved"), special=special, n_lanes=2)
    assert r["memory"]["all"]["tokens"] == r["retrieved"]["all"]["tokens"]
    assert r["memory"]["all"]["nll"] != r["retrieved"]["all"]["nll"]


def test_retrieval_store_takes_the_stand_ins_place(setup, tmp_path):
    """The same evaluation through the retrieval layer's SegmentStore (pooled states, FAISS search)."""
    from flows.lm_store import StorePastWindows
    from retrieval.config import RetrievalConfig

    docs, model, special = setup
    made = []

    def store() -> StorePastWindows:
        made.append(StorePastWindows(tmp_path / f"lane{len(made)}", RetrievalConfig(states_per_layer=8)))
        return made[-1]

    long = [d for d in docs if len(d.ids) > 4 * 32]
    r = evaluate_lm(
        model, long, 32, settings=("memory", "retrieved"), special=special, n_lanes=1, past_windows=store
    )
    assert r["memory"]["all"]["tokens"] == r["retrieved"]["all"]["tokens"]
    assert r["memory"]["all"]["nll"] != r["retrieved"]["all"]["nll"]
    assert made and made[0].n == math.ceil((len(long[-1].ids) - 1) / 32)  # every window was stored


def test_head_keyed_windows_are_keyed_as_ldx_run_keys_segments(setup):
    """window_keys="head": each past window is stored under (and asked for by) the attached key head's
    key of its tokens, here the even mean of the embedded input, not its mean top-layer state."""
    from txl.keys import RawKeys, attach
    from txl.windows import PastWindows

    docs, model, special = setup
    keys: list[torch.Tensor] = []

    class Recorded(PastWindows):
        def add(self, key, states, types):
            keys.append(key)
            super().add(key, states, types)

    long = [max(docs, key=lambda d: len(d.ids))]
    reads = RawKeys(0, "mean")
    attach(model, reads)
    try:
        kw = dict(settings=("retrieved",), special=special, n_lanes=1, past_windows=Recorded)
        headed = evaluate_lm(model, long, 32, window_keys="head", **kw)
        windows = [
            b.input_ids[0, : int((b.targets[0] != IGNORE).sum())]
            for b in LaneStream(long, 1, 32, shuffle=False)
        ]
        expected = reads.embedded(model, [w.tolist() for w in windows])
        assert len(keys) == len(windows) > 4
        torch.testing.assert_close(torch.stack(keys), torch.from_numpy(expected), atol=1e-5, rtol=0)
        assert (
            headed["retrieved"]["all"]["nll"] != evaluate_lm(model, long, 32, **kw)["retrieved"]["all"]["nll"]
        )
        with pytest.raises(ValueError, match="window_keys"):
            evaluate_lm(model, long, 32, window_keys="max", **kw)
    finally:
        attach(model, None)


def test_withholding_tags_and_connectives_and_eval_mem_len(setup):
    docs, model, special = setup
    one = [max(docs, key=lambda d: len(d.ids))]

    def nll(**kw) -> float:
        return evaluate_lm(model, one, 32, settings=("memory",), special=special, **kw)["memory"]["all"][
            "nll"
        ]

    base = nll()
    assert len({base, nll(tags=False), nll(connectives=False), nll(mem_len=96)}) == 4
    assert model.cfg.mem_len == 32  # the override is undone


def test_ldx_eval_lm_json_on_real_files(setup, shared_data, tmp_path, monkeypatch):
    from flows.cli import app
    from flows.cli_common import console
    from txl.checkpoint import save_model

    _, model, _ = setup
    ckpt = tmp_path / "tiny.pt"
    save_model(ckpt, model, {"seg_len": 32})
    pdf = sorted((shared_data / "zh" / "pdf").glob("*.pdf"))[0]
    wenshu = shared_data / "zh" / "judgments" / "wenshu_mixed.jsonl"
    res = CliRunner().invoke(
        app, ["eval", "lm", str(pdf), str(wenshu), "--checkpoint", str(ckpt), "--max-docs", "3", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["documents"] == 3 and set(out["settings"]) == {"none", "memory", "retrieved"}
    for setting in out["settings"].values():
        assert pdf.name in setting and setting["all"]["tokens"] > 0 and setting["all"]["bpc"] > 0
        for corpus in setting.values():
            assert {"distant_recall", "after_connective"} <= set(corpus)
            assert corpus["distant_recall"]["tokens"] <= corpus["tokens"]
    assert out["distant_threshold"] == model.cfg.n_layer * model.cfg.mem_len
    assert set(out["paired"]) == {"memory - none", "retrieved - memory"}
    overall = out["paired"]["memory - none"]["all"]["overall"]
    assert overall["tokens"] == out["settings"]["none"]["all"]["tokens"]
    assert overall["ci95"][0] <= overall["nll_diff"] <= overall["ci95"][1]

    monkeypatch.setattr(console, "_width", 300)  # wide enough that no cell wraps
    shown = CliRunner().invoke(
        app,
        [
            "eval",
            "lm",
            str(wenshu),
            "--checkpoint",
            str(ckpt),
            "--max-docs",
            "1",
            "--settings",
            "none,memory",
        ],
    )
    assert shown.exit_code == 0, shown.output
    assert "distant recall" in shown.output and "memory - none" in shown.output

    bad = CliRunner().invoke(app, ["eval", "lm", str(tmp_path / "missing.pdf"), "--checkpoint", str(ckpt)])
    assert bad.exit_code != 0 and "no such file" in bad.output
