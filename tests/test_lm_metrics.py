"""Long-range LM figures: the distant-recall and clause selections, the document bootstrap, and the
per-token NLLs of `evaluate_lm` they are computed from."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_models import TINY_TXL

import pipeline
from pipeline.tokenizer import encode_segment, load_tokenizer
from txl import TransformerXLConfig, TransformerXLLM
from txl.corpora import LMCorpus, encode_corpus
from txl.evaluate import evaluate_lm
from txl.lm_metrics import (
    SUBSETS,
    bootstrap_interval,
    clause_mask,
    distant_mask,
    distant_threshold,
    long_range_report,
    subset_masks,
)
from txl.recurrence import run_batch
from txl.streams import IGNORE, LaneStream, stream_document

TINY = dict(vocab_size=16384, **TINY_TXL, cutoffs=[2000, 8000], dropout=0.0, mem_len=16)

# small alphabets so that trigrams repeat
token_lists = st.lists(st.integers(0, 3), max_size=80)


def distant_by_hand(ids: list[int], threshold: int) -> list[bool]:
    out, last = [False] * len(ids), {}
    for i in range(2, len(ids)):
        key = tuple(ids[i - 2 : i + 1])
        out[i] = key in last and i - last[key] > threshold
        last[key] = i
    return out


@given(token_lists, st.integers(0, 30))
def test_distant_mask_is_the_trigrams_seen_only_far_back(ids, threshold):
    assert distant_mask(np.array(ids), threshold).tolist() == distant_by_hand(ids, threshold)


@given(token_lists, st.integers(0, 30), st.data())
def test_distant_mask_is_causal(ids, threshold, data):
    """A token's flag depends only on the tokens up to it: cutting the document later changes nothing."""
    cut = data.draw(st.integers(0, len(ids)))
    assert (
        distant_mask(np.array(ids[:cut]), threshold).tolist()
        == distant_mask(np.array(ids), threshold)[:cut].tolist()
    )


@given(token_lists)
def test_distant_set_is_empty_in_documents_shorter_than_the_threshold(ids):
    assert not distant_mask(np.array(ids), len(ids)).any()


def test_distant_mask_on_a_repeated_name():
    name = [7, 8, 9]
    ids = name + list(range(100, 140)) + name + list(range(200, 205)) + name
    m = distant_mask(np.array(ids), threshold=20)
    assert np.flatnonzero(m).tolist() == [45]  # the second mention's trigram; the third is only 8 back
    assert distant_threshold(TransformerXLLM(TransformerXLConfig(**TINY))) == 2 * 16
    with pytest.raises(ValueError, match="token ids"):
        distant_mask(np.array([1, 2, -3]), 5)


per_doc = st.lists(st.tuples(st.floats(-5, 5), st.integers(0, 20)), min_size=1, max_size=12).filter(
    lambda docs: any(n for _, n in docs)
)


@settings(deadline=None)
@given(per_doc, st.integers(0, 2**31))
def test_bootstrap_interval_holds_the_mean_within_the_documents(docs, seed):
    means = np.array([m for m, _ in docs])
    counts = np.array([n for _, n in docs])
    sums = means * counts
    mean = sums.sum() / counts.sum()
    lo, hi = bootstrap_interval(sums, counts, resamples=300, seed=seed)
    eps = 1e-9
    assert lo - eps <= mean <= hi + eps
    used = means[counts > 0]
    assert used.min() - eps <= lo <= hi <= used.max() + eps
    assert (lo, hi) == bootstrap_interval(sums, counts, resamples=300, seed=seed)  # the seed fixes it


def test_bootstrap_interval_of_a_constant_difference_and_of_nothing():
    lo, hi = bootstrap_interval(np.array([0.5, 1.5, 0.25]), np.array([2, 6, 1]))
    assert math.isclose(lo, 0.25) and math.isclose(hi, 0.25)
    with pytest.raises(ValueError, match="no document"):
        bootstrap_interval(np.zeros(3), np.zeros(3, dtype=int))


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


def test_clause_mask_from_ids_is_the_pipelines_clause_marking(tok, shared_data, tmp_path):
    """Recovered from the ids alone, the clauses are the ones the pipeline marks with connective_clause."""
    text = tmp_path / "terms.txt"
    text.write_text(
        "1. The Licensee shall pay the fee, subject to the terms of clause 4 and any later notice.\n\n"
        "2. The parties agree however that the price is fixed; provided that the buyer pays on time, "
        "no interest accrues. But the seller may otherwise terminate.\n"
    )
    wenshu = shared_data / "zh" / "judgments" / "wenshu_mixed.jsonl"
    docs = [next(iter(pipeline.load_documents(text)))]
    docs += list(itertools.islice(pipeline.load_documents(wenshu), 2))
    flagged = 0
    for doc in docs:
        enc = stream_document(doc, pipeline.segment(doc), lambda s: encode_segment(s, tok, clause=True))
        mask = clause_mask(enc.ids, tok.special_ids, tok)
        assert mask.tolist() == enc.connective.tolist()
        flagged += int(mask.sum())
    assert flagged > 0
    with pytest.raises(ValueError, match="re-encode"):
        # a byte token spells "A", which the tokenizer itself encodes as the letter's own token
        clause_mask(np.array([2, tok.hf.token_to_id("<0x41>")]), tok.special_ids, tok)


@pytest.fixture(scope="module")
def evaluated(shared_data, tok):
    torch.set_num_threads(1)
    corpus = LMCorpus("zh_wenshu", "zh/judgments/wenshu_mixed.jsonl")
    docs, _, _ = encode_corpus(corpus, shared_data, tok, 0.05, 0, max_docs=3)
    torch.manual_seed(0)
    model = TransformerXLLM(TransformerXLConfig(**TINY)).eval()
    special = torch.tensor(sorted(tok.special_ids))
    token_nll: dict = {}
    res = evaluate_lm(
        model, docs, 16, settings=("none", "memory"), special=special, n_lanes=2, token_nll=token_nll
    )
    return docs, model, special, res, token_nll


def test_token_nll_sits_at_the_tokens_positions(evaluated):
    docs, model, special, _, token_nll = evaluated
    one = [docs[0]]
    expect = np.full(len(one[0].ids), np.nan, dtype=np.float32)
    with torch.no_grad():
        for batch in LaneStream(one, 1, 16, shuffle=False):
            out = run_batch(model, batch, torch.device("cpu"))
            for t in range(16):
                y = int(batch.targets[0, t])
                if y != IGNORE and y not in special:
                    expect[int(batch.window[0]) * 16 + t + 1] = float(out.nll[0, t])
    got = token_nll["none"][0]
    assert np.array_equal(np.isnan(got), np.isnan(expect))
    assert np.allclose(got[~np.isnan(got)], expect[~np.isnan(expect)], atol=1e-5)


def test_report_agrees_with_evaluate_lm_and_pairs_are_token_by_token(evaluated, tok):
    docs, model, _, res, token_nll = evaluated
    masks = subset_masks(docs, distant_threshold(model), tok.special_ids, tok)
    report = long_range_report(docs, token_nll, masks, [("memory", "none"), ("none", "none")], resamples=200)
    for setting in ("none", "memory"):
        table = report["settings"][setting]
        assert set(table) == {"zh_wenshu", "all"}
        overall = table["all"]["overall"]
        assert overall["tokens"] == res[setting]["all"]["tokens"]
        assert math.isclose(overall["nll"], res[setting]["all"]["nll"], rel_tol=1e-5)
        for subset in ("distant_recall", "after_connective"):
            assert 0 < table["all"][subset]["tokens"] < overall["tokens"]
    diff = report["paired"]["memory - none"]["all"]
    for subset in SUBSETS:
        d = diff[subset]
        a, b = report["settings"]["memory"]["all"][subset], report["settings"]["none"]["all"][subset]
        assert d["tokens"] == a["tokens"] == b["tokens"] and d["docs"] <= len(docs)
        assert math.isclose(d["nll_diff"], a["nll"] - b["nll"], rel_tol=1e-5, abs_tol=1e-6)
        assert d["ci95"][0] <= d["nll_diff"] <= d["ci95"][1]
        assert math.isclose(d["ppl_ratio"], math.exp(d["nll_diff"]))
    same = report["paired"]["none - none"]["all"]["overall"]
    assert same["nll_diff"] == 0 and same["ci95"] == [0, 0]
