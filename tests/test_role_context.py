"""The block-role head's context pieces: Viterbi decoding over learned role transitions, the lexical
cues, the future view, and a head trained with them round-tripping through its file."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from retrieval.predict.heads import ROLE_LABELS, RoleHead
from retrieval.predict.role_context import CUES, N_CUES, cue_features, fit_transitions, viterbi
from retrieval.predict.role_head import _decayed_future
from retrieval.predict.tfidf import load_npz, save_npz
from retrieval.predict.train import is_held_apart, load_india, train_role_head


def role_probs(max_units: int, max_roles: int):
    """(units, roles) arrays whose rows are role distributions."""
    return st.integers(1, max_units).flatmap(
        lambda n: st.integers(2, max_roles).flatmap(
            lambda k: arrays(np.float64, (n, k), elements=st.floats(0.01, 1.0)).map(
                lambda p: p / p.sum(1, keepdims=True)
            )
        )
    )


@settings(max_examples=60, deadline=None)
@given(role_probs(9, 5), st.floats(0.0, 5.0))
def test_viterbi_with_uniform_transitions_is_the_argmax(probs, strength):
    k = probs.shape[1]
    uniform = np.full((k, k), -np.log(k))
    path = viterbi(np.log(probs), uniform, strength)
    # every unit gets a most probable role (ties in floating point may pick either)
    assert np.allclose(probs[np.arange(len(probs)), path], probs.max(1), rtol=1e-12, atol=0)
    distinct = probs.max(1) - np.sort(probs, 1)[:, -2] > 1e-9
    assert np.array_equal(path[distinct], probs.argmax(1)[distinct])


# small enough to score every path (4^6 = 4,096); 9 units of 5 roles took 46 s of brute force
@settings(max_examples=40, deadline=None)
@given(role_probs(6, 4), st.floats(0.1, 3.0), st.data())
def test_viterbi_finds_the_best_path(probs, strength, data):
    n, k = probs.shape
    trans = np.log(data.draw(arrays(np.float64, (k, k), elements=st.floats(0.05, 1.0))))
    path = viterbi(np.log(probs), trans, strength)

    def score(p):
        return np.log(probs[np.arange(n), p]).sum() + strength * sum(
            trans[a, b] for a, b in itertools.pairwise(p)
        )

    best = max(itertools.product(range(k), repeat=n), key=lambda p: score(np.array(p)))
    assert score(path) == pytest.approx(score(np.array(best)), abs=1e-9)
    assert len(viterbi(np.zeros((0, k)), trans, strength)) == 0


def test_transitions_are_row_distributions_and_learn_runs():
    runs = [np.array([0, 0, 0, 1, 1, 2]), np.array([0, 1, 1, 1])]
    t = fit_transitions(runs, 4)
    assert np.allclose(np.exp(t).sum(1), 1)
    assert t[0, 0] > t[0, 2] and t[1, 1] > t[1, 0]
    # a role never seen is followed evenly
    assert np.allclose(t[3], t[3, 0])


def test_cues_see_what_the_hashing_blurs():
    x = cue_features(
        [
            "See Ram Lal v. State of Bihar, AIR 1954 SC 211 and (1955) 2 SCR 1.",
            "Section 302 of the Indian Penal Code and Article 14 of the Constitution.",
            "In the result the appeal is dismissed with costs.",
            "the court",
        ]
    )
    assert x.shape == (4, N_CUES) and len(CUES) == N_CUES - 1
    assert x[0, 0] > 0 and x[0, 1] > 0 and x[0, 2] > 0
    assert x[1, 3] > 0 and x[1, 4] > 0 and x[1, 5] > 0
    assert x[2, 14] > 0 and x[2, 16] > 0
    assert not x[3, :-1].any() and x[3, -1] > 0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 10), st.data())
def test_future_view_sees_only_what_follows(n, data):
    x = np.random.default_rng(n).normal(size=(n, 3)).astype(np.float32)
    cut = data.draw(st.integers(0, n - 1))
    changed = x.copy()
    changed[: cut + 1] += 1
    assert np.allclose(_decayed_future(x, 0.7)[cut:], _decayed_future(changed, 0.7)[cut:])
    assert not _decayed_future(x, 0.7)[-1].any()


def test_text_head_with_context_round_trips(shared_data, torch_one_thread, tmp_path):
    india = load_india(shared_data / "en/judgments/india_sc_roles.jsonl")
    train = [d for d in india if not is_held_apart(d.doc_id)][:3]
    held = [d for d in india if is_held_apart(d.doc_id)][:2]
    options = {
        "word_features": 512,
        "cues": True,
        "future": True,
        "sequence": True,
        "class_power": 1.0,
        "smoothing": 1.0,
        "debias": 0.5,
    }
    head = train_role_head(train, [], tmp_path / "roles.npz", epochs=2, members=1, options=options)
    loaded = RoleHead.load(tmp_path / "roles.npz")
    assert {k: getattr(loaded, k) for k in options} == options
    assert np.allclose(loaded.transitions, head.transitions, atol=1e-6)
    units = [d.units for d in held]
    probs, probs_loaded = head.predict_proba(units)[0], loaded.predict_proba(units)[0]
    # the GRU reads each document alone: a batch of documents scores as each one does by itself
    assert np.allclose(head.predict_proba(units[:1])[0], probs, atol=1e-5)
    assert np.allclose(head.predict_proba(units[1:])[0], head.predict_proba(units)[1], atol=1e-5)
    assert probs.shape == (len(held[0].units), len(ROLE_LABELS))
    assert np.allclose(probs, probs_loaded, atol=2e-2)
    path = loaded.decode(probs_loaded)
    assert [r for r, _ in loaded.predict(units)[0]] == [ROLE_LABELS[j] for j in path]
    loaded.smoothing = loaded.debias = 0.0
    assert np.array_equal(loaded.decode(probs_loaded), probs_loaded.argmax(1))


def test_heads_saved_before_the_context_options_load_as_before(shared_data, torch_one_thread, tmp_path):
    india = load_india(shared_data / "en/judgments/india_sc_roles.jsonl")
    docs = [d for d in india if not is_held_apart(d.doc_id)][:2]
    # the fields' defaults: the options off, as every head before them was trained
    head = train_role_head(docs, [], tmp_path / "new.npz", epochs=1, members=1, options={})
    arrays, meta = load_npz(tmp_path / "new.npz")
    # the file as the code before the options wrote it
    old_meta = {
        k: v
        for k, v in meta.items()
        if k not in ("word_features", "cues", "future", "sequence", "class_power", "smoothing", "debias")
    }
    save_npz(
        tmp_path / "old.npz",
        {k: v for k, v in arrays.items() if k not in ("transitions", "log_prior")},
        old_meta,
    )
    old = RoleHead.load(tmp_path / "old.npz")
    assert not (old.word_features or old.cues or old.future or old.sequence or old.smoothing)
    assert old.transitions is None and old.log_prior is None and old.class_power == 0.5
    units = [d.units for d in docs]
    assert np.allclose(old.predict_proba(units)[0], head.predict_proba(units)[0], atol=2e-2)
    assert [r for r, _ in old.predict(units)[0]] == [
        ROLE_LABELS[j] for j in old.predict_proba(units)[0].argmax(1)
    ]
