"""The retrieval key head (txl/keys.py, retrieval/train_keys.py): it trains on a tiny encoder's frozen
states of real CJRC contexts, saves and loads, changes the keys every key-making path produces, and
binds the store to the keys it was built with."""

from __future__ import annotations

import gzip
from dataclasses import replace

import numpy as np
import pytest
import tiny_models
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.records import BlockType, Segment, sha256_file
from pipeline.tokenizer import encode_segment, load_tokenizer
from retrieval.config import RetrievalConfig
from retrieval.encoder import encode_query, load_encoder
from retrieval.eval.search import RetrievalEvalConfig, build_eval_set
from retrieval.inject import encode_document
from retrieval.key_pairs import build_pairs
from retrieval.stage import open_or_create
from retrieval.store import StoreError
from retrieval.train_keys import KeyTrainConfig, cached_raw, encode_raw, texts_hash, train_keys
from txl.checkpoint import save_model
from txl.keys import (
    KEYS_FILE,
    FitConfig,
    KeyHeadError,
    RawKeys,
    attach,
    head_for,
    key_identity,
    load_key_head,
    model_key,
)
from txl.pooling import BM25_K1, KEY_LAYER, KEY_POOLING, pool_key, token_weights


@pytest.fixture(scope="module")
def trained(shared_data, tmp_path_factory, torch_one_thread):
    tok = load_tokenizer()
    root = tmp_path_factory.mktemp("keys")
    checkpoint = root / "tiny.pt"
    save_model(checkpoint, tiny_models.tiny_encoder(tok, mem_len=64))
    cfg = KeyTrainConfig(
        data=str(shared_data),
        sources=("cjrc",),
        max_train_docs=40,
        fit=FitConfig(dim=16, batch_size=32, max_epochs=8, patience=8),
    )
    report = train_keys(str(checkpoint), root / "keys.pt", cfg)
    return checkpoint, root / "keys.pt", report


def test_head_trains_on_real_pairs_and_reports_both_key_kinds(trained):
    checkpoint, path, report = trained
    assert report["n_train_pairs"] >= 40 and report["n_val_pairs"] > 0
    assert report["n_hard_negatives"] > 0
    assert set(report["raw"]) == set(report["head"]) == {"mrr", "r@1", "r@10"}
    losses = [e["loss"] for e in report["epochs"]]
    assert min(losses[1:]) < losses[0]  # the contrastive loss goes down on the training pairs
    assert report["encoder_sha256"] == sha256_file(checkpoint)


def test_saved_head_loads_and_changes_the_keys(trained):
    checkpoint, path, report = trained
    head = load_key_head(path)
    assert head.identity == report["key_head"] and head.dim == 16
    model, tok = load_encoder(checkpoint, "cpu", keys="raw")
    raw = encode_query(model, tok, "原告与被告因何离婚？")
    assert raw.shape == (model.cfg.d_model,) and key_identity(model) == ""
    attach(model, head.raw_keys)  # the raw keys the head reads: its layer, its pooling
    pooled = encode_query(model, tok, "原告与被告因何离婚？")
    assert key_identity(model) == "raw@L0-bm25" and not np.allclose(pooled, raw, atol=1e-3)
    attach(model, head_for(checkpoint, str(path)))
    keyed = encode_query(model, tok, "原告与被告因何离婚？")
    assert keyed.shape == (16,) and abs(float(np.linalg.norm(keyed)) - 1) < 1e-5
    np.testing.assert_allclose(keyed, head.apply_np(pooled), atol=1e-5)
    ids = encode_segment(Segment("q", 0, 0, BlockType.OTHER, "本院认为被告人构成盗窃罪", 0, 0, 12), tok)[0]
    with torch.no_grad():
        out = model(torch.tensor([ids]))
    assert model_key(model, out, 0, slice(None), ids).shape == (16,)
    with pytest.raises(KeyHeadError, match="max"):
        model_key(model, out, 0, slice(None), ids, "max")


def test_head_pools_its_own_layer_with_its_token_weights(trained):
    """The default head reads the embedded input (layer 0), weighted by inverse document frequency with
    BM25's saturation: its key is the map of exactly that pooling, and the special tokens that open a
    segment weigh nothing."""
    checkpoint, path, _ = trained
    head = load_key_head(path)
    assert (head.layer, head.pooling) == (KEY_LAYER, KEY_POOLING) == (0, "bm25")
    tok = load_tokenizer()
    idf = head.idf.numpy()
    assert idf.shape == (tok.vocab_size,) and (idf >= 0).all()
    assert all(idf[i] == 0 for i in tok.special_ids) and idf.max() > 1
    model, _ = load_encoder(checkpoint, "cpu", keys=str(path))
    seg = Segment("d", 0, 0, BlockType.FACTS, "经审理查明，被告人于2019年3月窃得手机一部。", 0, 0, 22)
    ids = encode_segment(seg, tok)[0]
    with torch.no_grad():
        out = model(torch.tensor([ids, ids]))
    expected = head.apply_np(pool_key(out.layer_inputs[0][1].numpy(), "idf", token_weights(ids, idf, "bm25")))
    np.testing.assert_allclose(model_key(model, out, 1, slice(None), ids), expected, atol=1e-6)
    mean = head.apply_np(pool_key(out.layer_inputs[0][1].numpy()))
    assert not np.allclose(expected, mean, atol=1e-4)  # the weights change the key


@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=40),
    st.lists(st.floats(0.0, 8.0), min_size=10, max_size=10),
)
def test_bm25_weights_saturate_a_repeated_token(ids, idf):
    """ "idf" weighs each token by its idf; "bm25" gives a token seen tf times the whole share
    idf · tf (k1 + 1) / (tf + k1): its idf once, rising with tf, never past idf · (k1 + 1)."""
    idf = np.asarray(idf, dtype=np.float32)
    np.testing.assert_allclose(token_weights(ids, idf, "idf"), idf[ids])
    assert token_weights(ids, idf, "mean") is None
    weights = token_weights(ids, idf, "bm25")
    for token in set(ids):
        tf = ids.count(token)
        share = float(weights[np.asarray(ids) == token].sum())
        assert share == pytest.approx(idf[token] * tf * (BM25_K1 + 1) / (tf + BM25_K1), rel=1e-5, abs=1e-6)
        assert share <= idf[token] * (BM25_K1 + 1) + 1e-5
        if tf == 1:
            assert share == pytest.approx(idf[token], rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 12),
    st.lists(st.floats(0.0, 5.0, allow_nan=False), min_size=12, max_size=12),
    st.floats(0.1, 10.0),
)
def test_idf_pooling_is_a_normalised_weighted_mean(n, weights, scale):
    """idf pooling: unit norm; equal weights give the plain mean; scaling every weight changes nothing;
    all-zero weights fall back to the mean."""
    h = np.random.default_rng(n).normal(size=(n, 8)).astype(np.float32)
    w = np.asarray(weights[:n], dtype=np.float32)
    key = pool_key(h, "idf", w)
    assert abs(float(np.linalg.norm(key)) - 1) < 1e-5
    np.testing.assert_allclose(pool_key(h, "idf", w * scale), key, atol=1e-5)
    np.testing.assert_allclose(pool_key(h, "idf", np.ones(n)), pool_key(h), atol=1e-5)
    np.testing.assert_allclose(pool_key(h, "idf", np.zeros(n)), pool_key(h), atol=1e-6)
    with pytest.raises(ValueError, match="one weight per token"):
        pool_key(h, "idf", np.ones(n + 1))


def test_role_heads_read_keys_through_their_own_pinned_head():
    """The role towers were trained on keys of heads/role_keys.pt: the run's role encoder uses it, not
    the retrieval head, so retraining keys.pt leaves the role heads' inputs as they were trained."""
    from pipeline.paths import SHIPPED_CHECKPOINT
    from retrieval.predict.role_states import ROLE_KEYS, role_encoder

    model, _ = role_encoder(SHIPPED_CHECKPOINT, "cpu")
    pinned = load_key_head(ROLE_KEYS)
    assert key_identity(model) == pinned.identity
    assert pinned.encoder_sha256 == sha256_file(SHIPPED_CHECKPOINT)
    assert (pinned.layer, pinned.pooling) == (-1, "mean")


def test_head_is_refused_for_another_encoder_and_auto_falls_back(trained, tmp_path):
    checkpoint, path, _ = trained
    other = tmp_path / "other.pt"
    save_model(other, tiny_models.tiny_encoder(load_tokenizer(), seed=1, mem_len=64))
    with pytest.raises(KeyHeadError, match="trained on encoder"):
        head_for(other, str(path))
    assert head_for(other, "raw") is None
    assert head_for(other, "auto") is None  # the shipped head belongs to the shipped model only


def test_store_refuses_other_keys(trained, tmp_path):
    checkpoint, path, _ = trained
    model, _ = load_encoder(checkpoint, "cpu", keys=str(path))
    cfg = RetrievalConfig()
    store = open_or_create(tmp_path / "index", model, cfg, "m")
    assert store.dim == 16 and store.manifest["key_head"] == key_identity(model)
    store.commit()
    raw_model, _ = load_encoder(checkpoint, "cpu", keys="raw")
    with pytest.raises(StoreError, match="built with keys@"):
        open_or_create(tmp_path / "index", raw_model, cfg, "m")
    assert torch.equal(next(raw_model.parameters()), next(model.parameters()))


def test_mlp_head_trains_on_case_pairs_and_round_trips(shared_data, tmp_path, torch_one_thread):
    """The residual-MLP head on the case-search pair kinds: it trains, reports every kind, saves a
    weights-only file and loads back to the same keys and id."""
    tok = load_tokenizer()
    checkpoint = tmp_path / "tiny.pt"
    save_model(checkpoint, tiny_models.tiny_encoder(tok, mem_len=64))
    cfg = KeyTrainConfig(
        data=str(shared_data),
        sources=("judge",),
        max_train_docs=30,
        far_pairs=True,
        facts_pairs=True,
        charge_pairs=1,
        raw_cache=str(tmp_path / "raw.npz"),
        fit=FitConfig(dim=16, hidden=32, batch_size=32, max_epochs=6, patience=6),
    )
    report = train_keys(str(checkpoint), tmp_path / "keys.pt", cfg)
    assert {"judge_next", "judge_far", "judge_facts", "charge"} <= set(report["head_by_source"])
    losses = [e["loss"] for e in report["epochs"]]
    assert min(losses[1:]) < losses[0]
    blob = torch.load(tmp_path / "keys.pt", map_location="cpu", weights_only=True)
    assert blob["hidden"] == 32 and any(k.startswith("mlp.") for k in blob["state_dict"])
    head = load_key_head(tmp_path / "keys.pt")
    assert head.hidden == 32 and head.identity == report["key_head"]
    raw = np.random.default_rng(0).normal(size=(4, head.mean.numel())).astype(np.float32)
    keys = head.apply_np(raw)
    assert keys.shape == (4, 16) and np.allclose(np.linalg.norm(keys, axis=1), 1, atol=1e-5)
    # the MLP learned something: the head is no longer its linear part alone
    linear = torch.nn.functional.normalize(head.proj(torch.from_numpy(raw) - head.mean), dim=-1)
    assert not np.allclose(keys, linear.detach().numpy(), atol=1e-4)
    # the cached raw keys serve the same encoder and texts only: more charge pairs between the same
    # texts may use them, shorter facts queries may not
    encoder = sha256_file(checkpoint)
    reads = RawKeys(cfg.layer, cfg.pooling)
    more = build_pairs(replace(cfg, charge_pairs=2))
    assert cached_raw(cfg.raw_cache, encoder, texts_hash(more, reads)) is not None
    assert cached_raw(cfg.raw_cache, encoder, texts_hash(more, RawKeys())) is None  # another pooling
    assert (
        cached_raw(cfg.raw_cache, encoder, texts_hash(build_pairs(replace(cfg, query_chars=80)), reads))
        is None
    )


def test_shipped_head_loads_as_a_linear_head_with_its_recorded_id():
    """keys.pt (a linear head over the embedded input, layer 0, weighted by "bm25") loads with the id its training
    recorded; the role heads' pinned head (saved before `layer` and the MLP existed) loads as the
    last-layer linear head it was."""
    from retrieval.predict.role_states import ROLE_KEYS

    for path, reads in ((KEYS_FILE, (0, "bm25")), (ROLE_KEYS, (-1, "mean"))):
        head = load_key_head(path)
        assert head.hidden == 0 and head.mlp is None and (head.layer, head.pooling) == reads
        assert head.identity == head.extra["key_head"]
        raw = np.random.default_rng(1).normal(size=(3, head.mean.numel())).astype(np.float32)
        expected = torch.nn.functional.normalize(head.proj(torch.from_numpy(raw) - head.mean), dim=-1)
        np.testing.assert_allclose(head.apply_np(raw), expected.detach().numpy(), atol=1e-6)


def test_head_keys_stay_float32_under_the_encoders_bf16_autocast():
    """The index stage pools and keys segments inside the encoder's bf16 autocast (model.dtype): the head
    still gives float32 keys, the same as outside it."""
    head = load_key_head(KEYS_FILE)
    raw = np.random.default_rng(2).normal(size=(4, head.mean.numel())).astype(np.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        keys = head.apply_np(raw)
    assert keys.dtype == np.float32
    np.testing.assert_allclose(keys, head.apply_np(raw), atol=1e-6)


def test_cli_refuses_an_unknown_pair_source():
    from typer.testing import CliRunner

    from flows.cli import app

    res = CliRunner().invoke(app, ["train", "keys", "--sources", "clcr,lecard"])
    assert res.exit_code != 0 and "--sources: unknown lecard" in res.output


def test_eval_txl_arm_is_the_head_over_cached_raw_keys(trained, shared_data, tmp_path):
    """The CLCR eval's txl arm: keys through the head equal those of the encoder with the head attached;
    a second run (another case ranking) reads the cached raw keys; the head-less arm's raw keys (another
    pooling) are cached apart."""
    checkpoint, path, _ = trained
    with gzip.open(shared_data / "zh/judgments/clcr_cases.jsonl.gz", "rt", encoding="utf-8") as f:
        cases = [next(f) for _ in range(3)]
    (tmp_path / "cases.jsonl").write_text("".join(cases), encoding="utf-8")
    files = (
        tmp_path / "cases.jsonl",
        shared_data / "zh/retrieval/clcr_queries.jsonl",
        shared_data / "zh/retrieval/clcr_qrels_by_annotator.tsv",
    )
    cache = tmp_path / "cache"
    common = dict(dense_passages=0, checkpoint=str(checkpoint), key_cache=str(cache))
    es = build_eval_set(*files, RetrievalEvalConfig(dense_models=("txl",), key_head=str(path), **common))
    keyed = es.index.dense["txl"].vectors
    model, tok = load_encoder(checkpoint, "cpu", keys=str(path))
    first = [p for p in es.index.passages if p.doc_id == es.index.passages[0].doc_id]
    segs = [Segment(p.doc_id, i, 0, BlockType.OTHER, p.text, 0, 0, 0) for i, p in enumerate(first)]
    direct = np.stack(
        [e.key for e in encode_document(model, segs, [encode_segment(s, tok)[0] for s in segs])]
    )
    np.testing.assert_allclose(keyed[: len(first)], direct, atol=1e-5)
    assert len(list(cache.iterdir())) == 1 and es.key_heads["txl"] == key_identity(model)
    # a rerun ranking cases by their mean key reads the head's raw keys back from the cache
    mean_es = build_eval_set(
        *files, RetrievalEvalConfig(dense_models=("txl",), key_head=str(path), dense_case="mean", **common)
    )
    assert len(list(cache.iterdir())) == 1 and mean_es.key_heads["txl"] == key_identity(model)
    # raw keys of another pooling (the last layer's mean) are cached apart, not mixed with the head's
    raw_es = build_eval_set(*files, RetrievalEvalConfig(dense_models=("txl_raw",), **common))
    raw = raw_es.index.dense["txl_raw"].vectors
    assert len(list(cache.iterdir())) == 2 and raw_es.key_heads["txl_raw"] == ""
    attach(model, None)
    mean_last = np.stack(
        [e.key for e in encode_document(model, segs, [encode_segment(s, tok)[0] for s in segs])]
    )
    np.testing.assert_allclose(raw[: len(first)], mean_last, atol=1e-5)


def test_layer0_keys_come_from_the_embedding_table_as_the_forward_pass_gives_them(trained, shared_data):
    """Keys of the embedded input read no context, so eval and training look them up instead of running
    the layers (`RawKeys.embedded`): the same keys, even-mean and idf, as a document encoded with memory;
    keys of a later layer, or of a model that adds tag vectors to its input, are refused."""
    checkpoint, path, _ = trained
    idf = load_key_head(path).idf.numpy()
    model, tok = load_encoder(checkpoint, "cpu", keys="raw")
    texts = [
        "经审理查明，被告人于2019年3月窃得手机一部。",
        "本院认为，被告人以非法占有为目的。",
        "判决如下：",
    ]
    segs = [Segment("d", i, 0, BlockType.OTHER, t, 0, 0, len(t)) for i, t in enumerate(texts)]
    ids = [encode_segment(s, tok)[0] for s in segs]
    for reads in (RawKeys(0, "mean"), RawKeys(0, "idf", idf), RawKeys(0, "bm25", idf)):
        attach(model, reads)
        forward = np.stack([e.key for e in encode_document(model, segs, ids)])
        assert reads.context_free(model)
        np.testing.assert_allclose(reads.embedded(model, ids), forward, atol=1e-6)
    # the training pairs' raw keys (queries alone, passages in their documents), looked up and encoded
    b = build_pairs(KeyTrainConfig(data=str(shared_data), sources=("cjrc",), max_train_docs=4))
    reads = RawKeys(0, "idf", idf)
    attach(model, reads)
    np.testing.assert_allclose(encode_raw(model, tok, b, reads), encode_raw(model, tok, b), atol=1e-6)
    assert reads.embedded(model, []).shape == (0, model.cfg.d_model)
    assert not RawKeys(1, "idf", idf).context_free(model)
    with pytest.raises(ValueError, match="context"):
        RawKeys(-1, "mean").embedded(model, ids)
    tagged = tiny_models.tiny_encoder(tok, mem_len=64, tag_embedding=True)
    assert not RawKeys(0, "idf", idf).context_free(tagged)
