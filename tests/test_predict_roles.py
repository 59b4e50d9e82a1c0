"""Block roles: the shipped dual-tower head (its towers read the Transformer-XL) on Indian judgments held
apart and on Chinese judgments with their structural markers removed; a head trained here on encoder
states of a small slice; the file round trip; the memory view sees only the past."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.config import ParseConfig
from pipeline.paths import HEADS_DIR
from pipeline.records import BlockType
from retrieval.predict.heads import ROLE_LABELS, RoleHead, txl_views
from retrieval.predict.role_states import head_encoder, states_of
from retrieval.predict.train import (
    LabelledDoc,
    eval_roles,
    is_held_apart,
    load_india,
    role_scores,
    train_role_head,
    zh_units,
)


@pytest.fixture(scope="module")
def india(shared_data):
    return load_india(shared_data / "en/judgments/india_sc_roles.jsonl")


@pytest.fixture(scope="module")
def shipped(torch_one_thread):
    head = RoleHead.load(HEADS_DIR / "roles.npz")
    assert head.reads_txl, "the shipped role head's towers read the encoder"
    encoder = head_encoder(head)
    assert encoder is not None, "the checkpoint the shipped head was trained on is missing or changed"
    return head, states_of(encoder, head.decay)


def _majority_accuracy(docs) -> float:
    gold = Counter("|".join(sorted(g)) for d in docs for g in d.gold)
    return gold.most_common(1)[0][1] / sum(gold.values())


def _head_of(doc: LabelledDoc, n: int) -> LabelledDoc:
    return LabelledDoc(doc.doc_id, doc.units[:n], doc.gold[:n], doc.train[:n])


def test_shipped_head_on_held_apart_indian_judgments(india, shipped):
    head, encode = shipped
    # the first 100 sentences of two judgments: facts, arguments and the lower courts' rulings
    held = [_head_of(d, 100) for d in india if d.doc_id not in set(head.trained_on)][:2]
    assert held and all(is_held_apart(d.doc_id) for d in held)
    result = eval_roles(head, held, encode)
    print(result, "majority", _majority_accuracy(held))
    # five gold groups; always answering OPINION (the majority) scores macro-F1 ≈ 0.15
    assert result["macro_f1"] >= 0.35
    assert result["accuracy"] >= _majority_accuracy(held)


def test_shipped_head_on_zh_judgments_without_markers(shared_data, shipped):
    head, encode = shipped
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    docs = itertools.islice(pipeline.load_documents(path, ParseConfig(jsonl_text_field="fd")), 60)
    held = [zh_units(d, strip_markers=True) for d in docs if d.doc_id not in set(head.trained_on)][:8]
    assert len(held) >= 5
    result = eval_roles(head, held, encode)
    print(result, "majority", _majority_accuracy(held))
    assert result["accuracy"] >= 0.8 and result["macro_f1"] >= 0.6


def test_encoder_head_trained_here_learns_the_roles(india, shipped, tmp_path):
    _, encode = shipped
    train = [_head_of(d, 50) for d in india if not is_held_apart(d.doc_id)][:3]
    held = [_head_of(d, 50) for d in india if is_held_apart(d.doc_id)][:2]
    head = train_role_head(
        train,
        [],
        tmp_path / "roles.npz",
        epochs=6,
        towers="txl",
        encode=encode,
        encoder={"file": "txl_lm.pt", "sha256": "test"},
        members=1,
        # the towers alone, argmax decoding: 150 sentences of 3 judgments leave most roles unseen or
        # seen once, and dividing by such priors (ROLE_OPTIONS' debias) would hand every unit the rarest
        options={},
    )
    units = [d.units for d in held]
    states = encode(units)
    result = eval_roles(head, held, lambda _: states)
    print(result, "majority", _majority_accuracy(held))
    assert result["macro_f1"] >= 0.3 and result["accuracy"] >= _majority_accuracy(held) - 0.05
    loaded = RoleHead.load(tmp_path / "roles.npz")
    assert (loaded.towers, loaded.encoder, loaded.d_txl) == ("txl", head.encoder, head.d_txl)
    assert all(
        np.allclose(a, b, atol=2e-2)
        for a, b in zip(head.predict_proba(units, states), loaded.predict_proba(units, states), strict=True)
    )
    # states of a checkpoint other than the one it was trained on are refused
    assert head_encoder(loaded) is None
    with pytest.raises(ValueError):
        loaded.predict_proba(units)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=2, max_size=8), st.integers(1, 20), st.data())
def test_memory_view_sees_only_the_past(lengths, mem_len, data):
    rng = np.random.default_rng(0)
    hidden = [rng.normal(size=(n, 8)).astype(np.float32) for n in lengths]
    keys = np.stack([h.mean(0) for h in hidden])
    cut = data.draw(st.integers(0, len(lengths) - 1))
    changed = hidden[:cut] + [h + 1 for h in hidden[cut:]]
    _, mem = txl_views(keys, hidden, mem_len, 0.7)
    _, mem_changed = txl_views(np.stack([h.mean(0) for h in changed]), changed, mem_len, 0.7)
    # units up to `cut` read memory of unchanged units only
    assert np.allclose(mem[: cut + 1], mem_changed[: cut + 1], atol=1e-5)
    assert not mem[0].any()


def test_a_wrong_role_of_a_gold_group_counts_against_that_group():
    # India's Argument is CLAIMS or DEFENSE: a CLAIMS prediction on a FACTS sentence is a false positive
    # of the Argument group, not of some label no gold unit carries
    T = BlockType
    arg, facts = {T.CLAIMS, T.DEFENSE}, {T.FACTS}
    doc = LabelledDoc(
        "d", ["a", "b", "c", "d"], [arg, arg, facts, facts], [T.CLAIMS, T.DEFENSE, T.FACTS, T.FACTS]
    )
    decoded = [np.array([ROLE_LABELS.index(t) for t in (T.DEFENSE, T.FACTS, T.CLAIMS, T.FACTS)])]
    per = role_scores([doc], decoded, per_role=True)["per_role"]
    assert per["CLAIMS|DEFENSE"]["precision"] == 0.5 and per["CLAIMS|DEFENSE"]["recall"] == 0.5
    assert per["FACTS"]["precision"] == 0.5 and per["FACTS"]["recall"] == 0.5
