"""The trained variants of issue 19 item 5: the tag and scope embeddings (parameters only when on, zero
= absent, acting once learned, memory continuation exact), the causal clause scope (equal to the clause
mask found from the text, and independent of later tokens), and streams without block tokens (targets
still the next token)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_txl_model import ids, model_of
from tiny_models import TINY_TXL

from benchmarks.lm_variants import VARIANTS, markdown, run_config, summarize
from pipeline.connectives import find_connectives, token_mask
from pipeline.paths import TOKENIZER_FILE
from pipeline.tokenizer import load_tokenizer
from txl.corpora import LMCorpus, prepare
from txl.lm_metrics import SUBSETS, clause_mask
from txl.streams import (
    IGNORE,
    ClauseEnds,
    EncodedDoc,
    LaneStream,
    clause_ends,
    clause_scope,
    load_split,
    stream_variant,
    strip_tokens,
)
from txl.train import TrainConfig, Trainer

pytestmark = pytest.mark.usefixtures("torch_one_thread")

FEATURE_KEYS = {"tag_embedding": "features.tag_emb", "scope_embedding": "features.scope_emb"}


def _inputs(seed: int = 2):
    g = torch.Generator().manual_seed(seed)
    types = torch.randint(-1, 4, (2, 12), generator=g)
    scope = torch.rand(2, 12, generator=g) < 0.4
    return ids(2, 12, seed), types, scope


def _run(model, x, types, scope):
    """Two consecutive segments through the memory: the second call's NLL and memory states."""
    first = model(x[:, :6], targets=x[:, 1:7], block_types=types[:, :6], scope_mask=scope[:, :6])
    out = model(
        x[:, 6:11], first.memory, targets=x[:, 7:12], block_types=types[:, 6:11], scope_mask=scope[:, 6:11]
    )
    return out.nll, out.memory.states


@pytest.mark.parametrize("flag", list(FEATURE_KEYS))
def test_feature_parameters_exist_only_when_their_flag_is_on(flag):
    plain = set(model_of().state_dict())
    assert not any(k.startswith("features.") for k in plain)
    with_flag = set(model_of(**{flag: True}).state_dict())
    assert with_flag - plain == {FEATURE_KEYS[flag]} and plain <= with_flag


def test_zero_features_equal_the_model_without_them_and_learned_ones_act():
    x, types, scope = _inputs()
    nll_plain, states_plain = _run(model_of(), x, types, scope)
    model = model_of(tag_embedding=True, scope_embedding=True)  # same seed: same other weights
    nll, states = _run(model, x, types, scope)
    assert torch.equal(nll, nll_plain)
    assert all(torch.equal(a, b) for a, b in zip(states, states_plain, strict=True))
    with torch.no_grad():
        model.features.tag_emb.normal_()
        model.features.scope_emb.normal_()
    # unknown types and no scope: a learned vector has nothing to attach to
    nll_none, _ = _run(model, x, torch.full_like(types, -1), torch.zeros_like(scope))
    assert torch.equal(nll_none, nll_plain)
    nll_tags, _ = _run(model, x, types, torch.zeros_like(scope))
    nll_scope, _ = _run(model, x, torch.full_like(types, -1), scope)
    assert not torch.allclose(nll_tags, nll_plain) and not torch.allclose(nll_scope, nll_plain)


def test_features_keep_one_call_equal_to_two_calls_through_the_memory():
    """The features enter the layer-0 input, so the memory carries them: two segments in two calls
    equal one call over both."""
    torch.manual_seed(0)
    model = model_of(tag_embedding=True, scope_embedding=True, mem_len=16).double()
    with torch.no_grad():
        model.features.tag_emb.normal_()
        model.features.scope_emb.normal_()
    x, types, scope = _inputs()
    whole = model(x[:, :11], targets=x[:, 1:12], block_types=types[:, :11], scope_mask=scope[:, :11]).nll
    first = model(x[:, :6], targets=x[:, 1:7], block_types=types[:, :6], scope_mask=scope[:, :6])
    second, _ = _run(model, x, types, scope)
    torch.testing.assert_close(torch.cat([first.nll, second], 1), whole, rtol=1e-10, atol=1e-10)


def test_feature_gradients_reach_only_the_used_vectors():
    model = model_of(tag_embedding=True, scope_embedding=True).train()
    x, types, scope = _inputs()
    types = types.clamp(min=0) % 2  # block types 0 and 1 only
    model(x, targets=x, block_types=types, scope_mask=scope).nll.sum().backward()
    grad = model.features.tag_emb.grad
    assert grad[:2].abs().sum(1).gt(0).all() and torch.equal(grad[2:], torch.zeros_like(grad[2:]))
    assert model.features.scope_emb.grad.abs().sum() > 0


# ---- the clause scope ---------------------------------------------------------------------------------


def _reference_scope(ids, connective, ends: ClauseEnds) -> list[bool]:
    """clause_scope token by token: a flag opens a clause, a closer ends it after itself."""
    out, open_ = [], False
    for i, flag in zip(ids, connective, strict=True):
        closer = ends.closes[i] or ends.special[i]
        keeps = not closer or (ends.inside[i] and not ends.special[i])
        out.append(bool(flag or (open_ and keeps)))
        open_ = bool((flag or open_) and not closer)
    return out


_VOCAB = 12
_ends = st.builds(
    lambda c, i, s: ClauseEnds(np.array(c), np.array(c) & np.array(i), np.array(s)),
    *(st.lists(st.booleans(), min_size=_VOCAB, max_size=_VOCAB) for _ in range(3)),
)
_tokens = st.lists(st.tuples(st.integers(0, _VOCAB - 1), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(_ends, _tokens, _tokens, st.data())
def test_clause_scope_is_causal_and_follows_the_clauses(ends, tokens, later, data):
    seq = [(t, f and not ends.special[t]) for t, f in tokens]  # no flag ever sits on a structural token
    cut = data.draw(st.integers(0, len(seq)))
    changed = seq[:cut] + [(t, f and not ends.special[t]) for t, f in later]
    a = clause_scope(np.array([t for t, _ in seq]), np.array([f for _, f in seq]), ends)
    b = clause_scope(np.array([t for t, _ in changed]), np.array([f for _, f in changed]), ends)
    assert a[:cut].tolist() == b[:cut].tolist()  # what comes after token i never changes its flag
    assert a.tolist() == _reference_scope([t for t, _ in seq], [f for _, f in seq], ends)


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


@pytest.mark.parametrize(
    "texts",
    [
        [
            "The tenant shall pay the rent, provided that the landlord repairs the roof. However the court"
            " held otherwise; unless the lease says so (in writing), it fails.",
            "Subject to clause 4, the buyer may terminate.\nBut not before the closing date",
        ],
        [
            "被告人辩称其无罪，但是证据确实充分。本院认为，虽然被告人认罪，然而情节严重",
            "但书条款除外。不过三日",
        ],
    ],
)
def test_clause_scope_from_the_stored_flags_equals_the_clause_mask_of_the_text(tokenizer, texts):
    ids, flags = [], []
    for k, text in enumerate(texts):
        enc = tokenizer.hf.encode(text, add_special_tokens=False)
        prefix = tokenizer.prefix_ids("FACTS", k == 0)
        ids += prefix + enc.ids
        flags += [False] * len(prefix) + token_mask(text, find_connectives(text), enc.offsets)
    scope = clause_scope(np.array(ids), np.array(flags), clause_ends(tokenizer))
    expected = clause_mask(np.array(ids), tokenizer.special_ids, tokenizer)
    assert scope.tolist() == expected.tolist() and 0 < scope.sum() < len(ids)


# ---- streams of prepared data ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(shared_data, tmp_path_factory):
    """A prepared stream folder of five real criminal judgments."""
    out = tmp_path_factory.mktemp("lm_data")
    corpus = LMCorpus("zh_criminal", "zh/judgments/judge_criminal.jsonl.gz", text_field="fd")
    prepare(out, shared_data, (corpus,), TOKENIZER_FILE, holdout=0.3, max_docs=5, log=lambda _: None)
    return out


def test_stream_variant_of_real_documents(data_dir, tokenizer):
    docs = load_split(data_dir, "all")
    blocks = np.array(sorted(tokenizer.block_ids.values()))
    scoped = stream_variant(docs, data_dir, scope=True)
    both = stream_variant(docs, data_dir, scope=True, strip_blocks=True)
    for d, s, b in zip(docs, scoped, both, strict=True):
        assert s.scope.tolist() == clause_mask(d.ids, tokenizer.special_ids, tokenizer).tolist()
        keep = ~np.isin(d.ids, blocks)
        assert keep.sum() < len(d.ids) and not np.isin(b.ids, blocks).any()
        assert b.ids.tolist() == d.ids[keep].tolist() and b.types.tolist() == d.types[keep].tolist()
        assert b.scope.tolist() == s.scope[keep].tolist() and b.n_chars == d.n_chars


def test_streams_without_block_tokens_keep_targets_the_next_token(tokenizer):
    blk = sorted(tokenizer.block_ids.values())
    g = np.random.default_rng(0)
    n = 300
    raw = g.integers(100, 2000, n).astype(np.int32)
    raw[g.random(n) < 0.1] = blk[1]
    types = g.integers(0, 5, n).astype(np.int8)
    doc = EncodedDoc("d", "c", raw, types, g.random(n) < 0.05, 1000, g.random(n) < 0.3)
    stripped = strip_tokens(doc, np.array(blk))
    kept = np.flatnonzero(raw != blk[1])
    stream = LaneStream([stripped], 2, 16, shuffle=False)
    seen = 0
    for batch in stream:
        for k in range(2):
            if int(batch.doc[k]) < 0:
                continue
            real = batch.targets[k] != IGNORE
            s = int(batch.window[k]) * 16
            pos = kept[s : s + int(real.sum()) + 1]  # original positions of the inputs, then the last target
            assert batch.input_ids[k][real].tolist() == raw[pos[:-1]].tolist()
            assert batch.targets[k][real].tolist() == raw[pos[1:]].tolist()
            assert batch.block_types[k][real].tolist() == types[pos[:-1]].tolist()
            assert batch.scope[k][real].tolist() == doc.scope[pos[:-1]].tolist()
            seen += int(real.sum())
    assert seen == len(kept) - 1


def test_trainer_learns_the_features_on_a_variant_stream(data_dir, tmp_path):
    cfg = TrainConfig(
        data_dir=str(data_dir),
        out_dir=str(tmp_path),
        model={**TINY_TXL, "cutoffs": [2000, 8000], "tag_embedding": True, "scope_embedding": True},
        strip_block_tokens=True,
        seg_len=64,
        mem_len=64,
        batch_size=4,
        max_steps=20,  # more windows than the training documents hold: every scope token is read
        warmup_steps=1,
        eval_every=0,
        threads=1,
        plot=False,
    )
    trainer = Trainer(cfg)
    blocks = list(load_tokenizer().block_ids.values())
    assert all(d.scope is not None and not np.isin(d.ids, blocks).any() for d in trainer.stream.docs)
    assert trainer.stream.windows_per_epoch() <= 20 * 4 and sum(d.scope.sum() for d in trainer.stream.docs)
    trainer.run(resume=False)
    features = trainer.module.features
    assert features.tag_emb.abs().sum() > 0 and features.scope_emb.abs().sum() > 0
    assert json.loads((tmp_path / "config.json").read_text())["strip_block_tokens"] is True


# ---- the benchmark's figures ----------------------------------------------------------------------------


def _flat(cfg: dict) -> dict:
    return {
        **{k: v for k, v in cfg.items() if k != "model"},
        **{f"model.{k}": v for k, v in cfg["model"].items()},
    }


def test_variant_runs_differ_from_the_baseline_config_in_one_thing(tmp_path):
    args = argparse.Namespace(
        config="data/configs/txl_lm_ablation.toml", data=None, out=str(tmp_path), steps=7, threads=1, warmup=3
    )
    base = _flat(run_config(args, "baseline", 0).model_dump())
    for variant, change in VARIANTS.items():
        cfg = run_config(args, variant, 2)
        assert cfg.out_dir == str(tmp_path / "steps7" / f"{variant}-seed2") and cfg.seed == 2
        assert (cfg.max_steps, cfg.warmup_steps, cfg.export_fp16) == (7, 3, cfg.out_dir + "/model.pt")
        flat = _flat(cfg.model_dump())
        changed = {k for k in flat.keys() | base.keys() if flat.get(k) != base.get(k)}
        assert changed - {"out_dir", "seed", "export_fp16"} == set(_flat({"model": {}, **change}))


def test_summary_pairs_the_same_seeds_and_compares_with_the_seed_spread():
    g = np.random.default_rng(0)
    docs = [EncodedDoc(f"d{i}", "c", np.arange(50, dtype=np.int32), np.zeros(50, np.int8), np.zeros(50, bool), 50)
            for i in range(4)]  # fmt: skip
    masks = [{s: np.ones(50, bool) for s in SUBSETS} for _ in docs]

    def run(ppl: float, shift: float, seed: int) -> dict:
        nll = [g.random(50).astype(np.float32) + shift for _ in docs]
        return {"ppl": ppl, "bpc": 0.0, "nll": nll}

    runs = {"baseline": {s: run(10.0 + s, 0.0, s) for s in (0, 1)}, "better": {}}
    runs["better"] = {
        s: {**r, "ppl": r["ppl"] - 3, "nll": [x - 0.25 for x in r["nll"]]}
        for s, r in runs["baseline"].items()
    }
    base, better = summarize(runs, docs, masks, resamples=50)
    assert base["ppl_sd"] == pytest.approx(np.std([10, 11], ddof=1)) and "paired" not in base
    assert better["ppl_diff"] == pytest.approx(-3.0) and better["beats_seed_spread"] is True
    overall = better["paired"]["overall"]
    assert overall["nll_diff"] == pytest.approx(-0.25, abs=1e-6) and overall["tokens"] == 4 * 50
    assert better["paired_per_seed"][1]["nll_diff"] == pytest.approx(-0.25, abs=1e-6)
    assert "| better | 2 |" in markdown([base, better])
