"""The domain tokenizer: the shipped vocabulary, exact round trips on the real corpora, deterministic
training, and the `ldx tokenizer` commands."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from pipeline.paths import TOKENIZER_FILE
from pipeline.records import BlockType, Segment
from pipeline.tokenizer import (
    CorpusSpec,
    TrainOptions,
    encode_segment,
    encode_segments,
    iter_corpus,
    load_tokenizer,
    train,
)


def shared_spec(shared_data: Path, spec: str) -> CorpusSpec:
    """A corpus spec of data/tokenizer/training.json, re-rooted at the shared data fixture."""
    parsed = CorpusSpec.parse(spec)
    relative = parsed.path.as_posix().split("shared/data/", 1)[1]
    return CorpusSpec(shared_data / relative, parsed.fields)


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer()


def test_shipped_tokenizer(tokenizer):
    assert TOKENIZER_FILE.stat().st_size < 3_000_000
    assert tokenizer.vocab_size >= 16_000
    assert (tokenizer.pad_id, tokenizer.doc_id) == (0, 1)
    assert sorted(tokenizer.block_ids) == sorted(BlockType)
    assert len(set(tokenizer.block_ids.values()) | {0, 1}) == len(BlockType) + 2
    for term in ("被告人", "本院认为", "有期徒刑", "判决如下", "人民法院"):
        assert len(tokenizer.encode(term)) == 1, term
    assert load_tokenizer() is tokenizer  # cached


def test_unusable_tokenizer_files_are_named(tmp_path):
    garbage = tmp_path / "tokenizer.json"
    garbage.write_text("{not json")
    with pytest.raises(ValueError, match="not a tokenizer.json"):
        load_tokenizer(garbage)
    with pytest.raises(FileNotFoundError, match="no tokenizer.json"):
        load_tokenizer(tmp_path / "missing")
    foreign = tmp_path / "foreign" / "tokenizer.json"
    foreign.parent.mkdir()
    Tokenizer(models.BPE()).save(str(foreign))  # valid, but without the project's special tokens
    with pytest.raises(ValueError, match="lacks the special tokens"):
        load_tokenizer(foreign.parent)


def test_special_tokens_in_text_are_text(tokenizer):
    text = "<doc> <pad> <blk_FACTS> <0x41>"
    ids = tokenizer.encode(text)
    assert not set(ids) & tokenizer.special_ids
    assert tokenizer.decode(ids) == text


# Every corpus the tokenizer was trained on, and two it was not.
OTHER_CORPORA = [
    "zh/judgments/criminal_law_articles.jsonl:text",
    "en/contracts/cuad_qa.jsonl.gz:question,answers.text",
]


def test_round_trip_on_every_shared_corpus(tokenizer, shared_data):
    specs = json.loads((TOKENIZER_FILE.parent / "training.json").read_text())["corpora"]
    specs = [shared_spec(shared_data, s) for s in specs]
    specs += [CorpusSpec.parse(f"{shared_data}/{s}") for s in OTHER_CORPORA]
    for spec in specs:
        texts = list(itertools.islice(iter_corpus(spec), 25))
        texts = [t[:20_000] for t in texts]  # a prefix of long records keeps this test fast
        assert texts and any(texts), spec
        decoded = tokenizer.hf.decode_batch(
            [e.ids for e in tokenizer.hf.encode_batch(texts, add_special_tokens=False)]
        )
        for text, back in zip(texts, decoded, strict=True):
            assert back == text, f"{spec}: round trip changed {text[:80]!r}"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_round_trip_on_any_text(text):
    tokenizer = load_tokenizer()
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_training_is_deterministic_and_sized(shared_data):
    spec = CorpusSpec(shared_data / "zh/judgments/wenshu_mixed.jsonl")
    texts = [t[:3000] for t in iter_corpus(spec)]
    texts += [
        t[:3000]
        for t in itertools.islice(
            iter_corpus(CorpusSpec.parse(f"{shared_data}/en/judgments/india_sc_roles.jsonl:sentences.text")),
            20,
        )
    ]
    options = TrainOptions(vocab_size=1500, limit_alphabet=600)
    first, second = train(texts, options), train(texts, options)
    assert first.hf.to_str() == second.hf.to_str()
    assert first.vocab_size == 1500
    assert all(first.decode(first.encode(t)) == t for t in texts[:30])
    with pytest.raises(ValueError, match="too small"):
        train(texts, TrainOptions(vocab_size=300))


def test_encode_segment_aligns_ids_and_mask(tokenizer):
    text = "但是被告人有自首情节。However, the appeal fails."
    seg = Segment("d", 0, 3, BlockType.OPINION, text, 0, 0, len(text), connectives=[(0, 2), (11, 18)])
    ids, mask = encode_segment(seg, tokenizer)
    assert ids[:2] == [tokenizer.doc_id, tokenizer.block_ids[BlockType.OPINION]]
    assert len(ids) == len(mask) and mask[:2] == [False, False]
    # causal flags: on the first token ending past 但是 (被 or 被告), not on 但是 itself
    enc = tokenizer.hf.encode(text, add_special_tokens=False)
    first = next(i for i, (_, end) in enumerate(enc.offsets) if end > 2)
    assert [i for i, m in enumerate(mask[2:]) if m][0] == first and enc.offsets[first][0] >= 2
    assert tokenizer.decode(ids) == text
    assert encode_segments([seg, seg], tokenizer) == [(ids, mask), (ids, mask)]
    later = Segment("d", 5, 3, BlockType.OPINION, text, 0, 0, len(text))
    ids, mask = encode_segment(later, tokenizer)
    assert ids[0] == tokenizer.block_ids[BlockType.OPINION] and not any(mask)


def ldx(*args: str):
    """`ldx` in this process (its start-up, which imports torch, is paid once per test session)."""
    from typer.testing import CliRunner

    from flows.cli import app

    return CliRunner().invoke(app, list(args))


def test_cli_trains_and_reports_held_out_compression(shared_data, tmp_path):
    out = tmp_path / "tok"
    run = ldx(
        "tokenizer", "train",
        f"{shared_data}/zh/judgments/wenshu_mixed.jsonl",
        f"{shared_data}/en/judgments/india_sc_roles.jsonl:sentences.text",
        "--out", str(out), "--vocab-size", "1200", "--max-chars", "150000", "--holdout", "0.2",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert "all zh" in run.stdout
    report = json.loads((out / "training.json").read_text())
    assert report["vocab_size"] == 1200
    assert {"all zh", "all en"} <= set(report["held_out"])
    held = report["held_out"]
    # even this tiny vocabulary beats the byte baseline in both languages
    assert held["all zh"]["tokens_per_char"] < held["all zh"]["bytes_per_char"]
    assert held["all en"]["tokens_per_char"] < 0.5
    assert load_tokenizer(out).vocab_size == 1200
    show = ldx("tokenizer", "show", "本院认为", "--tokenizer", str(out))
    assert show.exit_code == 0 and "tokens for 4 characters" in show.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["/no/such.jsonl"], "no such corpus file"),
        (["{shared}/zh/judgments/wenshu_mixed.jsonl:nofield"], "no text found"),
        (["{shared}/zh/judgments/wenshu_mixed.jsonl", "--holdout", "1.5"], "--holdout"),
        (["{shared}/zh/judgments/wenshu_mixed.jsonl", "--vocab-size", "100"], "too small"),
    ],
)
def test_cli_errors_are_one_line(shared_data, tmp_path, args, message):
    run = ldx("tokenizer", "train", *[a.format(shared=shared_data) for a in args], "--out", str(tmp_path))
    assert run.exit_code != 0
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1
