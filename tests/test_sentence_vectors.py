"""The sentence model's vectors of a run's English segments: written by `ldx run`'s index stage into
OUT_DIR/index/ (retrieval/store_vectors.py), read by `ldx ask` instead of embedding every segment on the
first English question; an index written without them still answers, embedding what is missing."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import retrieval
from pipeline.store import open_duckdb
from retrieval.config import RetrievalConfig
from retrieval.evidence import ARM, is_english
from retrieval.store import SegmentEntry, SegmentStore
from retrieval.store_vectors import file_name, read_sentence_vectors, text_hash

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
EWCA = "en/judgments/uk_ewca_2020.jsonl.gz"
QUESTION = "What did the court decide on appeal?"


def _shortest_ewca_record(shared_data: Path, among: int = 20) -> str:
    """The shortest of the first judgments of the shared EWCA file, as its JSON line (a small run)."""
    with gzip.open(shared_data / EWCA, "rt", encoding="utf-8") as f:
        lines = list(itertools.islice(f, among))
    return min(lines, key=lambda line: json.loads(line)["n_chars_body"])


@pytest.fixture(scope="module")
def english_run(prefect_harness, shared_data, tmp_path_factory):
    """`ldx run` (index stage, shipped encoder) over one shared EWCA judgment, read through its JSONL
    layout, and the Chinese civil sample."""
    from flows.run import run_flow
    from retrieval.encoder import checkpoint_file

    if checkpoint_file(None) is None:
        pytest.fail("no shipped checkpoint in data/models/")
    root = tmp_path_factory.mktemp("vectors")
    corpus = root / "in"
    corpus.mkdir()
    (corpus / "ewca.jsonl").write_text(_shortest_ewca_record(shared_data), encoding="utf-8")
    (corpus / "zh_civil_judgment.pdf").symlink_to(SAMPLES / "zh_civil_judgment.pdf")
    out = root / "out"
    manifest = run_flow(str(corpus), str(out), {"run": {"batch_size": 1, "stages": ["index"]}})
    assert manifest["status"] == "completed" and manifest["counts"]["errors"] == 0
    return out, manifest


def _segments(out: Path) -> dict[str, str]:
    return dict(open_duckdb(out).execute("SELECT segment_id, text FROM segments").fetchall())


def test_the_index_stage_stores_a_vector_per_english_segment(english_run):
    out, manifest = english_run
    kinds = dict(open_duckdb(out).execute("SELECT kind, count(*) FROM documents GROUP BY kind").fetchall())
    assert kinds == {"en_judgment": 1, "zh_judgment": 1}  # the EWCA record is a document of the run
    segments = _segments(out)
    english = {s for s, text in segments.items() if is_english(text, RetrievalConfig())}
    assert 0 < len(english) < len(segments)
    stored = read_sentence_vectors(out / "index")
    assert set(stored) == english
    assert all(h == text_hash(segments[s]) for s, (h, _) in stored.items())
    norms = np.linalg.norm(np.stack([v for _, v in stored.values()]), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-4)
    counts = manifest["counts"]["index"]
    assert counts["sentence_vectors"] == counts["embedded_sentence_vectors"] == len(english)


def test_ask_reads_the_stored_vectors_and_answers_as_without_them(english_run, tmp_path, monkeypatch):
    """The first English question embeds no segment; over a copy of the run whose index has no vectors (as
    one written before this change) it embeds every English segment and answers the same."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no segment vectors from another test
    out, _ = english_run
    asker = retrieval.Asker(out)
    answer = asker.ask(QUESTION)
    arm = asker.search_index.dense[ARM]
    assert arm.embedded == 0 and arm.from_index == len(read_sentence_vectors(out / "index")) > 0
    assert ARM in answer.arms

    old = tmp_path / "old"
    shutil.copytree(out, old, symlinks=True)
    manifest = json.loads((old / "index" / "manifest.json").read_text())
    del manifest["sentence_model"]
    (old / "index" / file_name(manifest["generation"])).unlink()
    (old / "index" / "manifest.json").write_text(json.dumps(manifest))
    assert read_sentence_vectors(old / "index") == {}
    before = retrieval.Asker(old)
    again = before.ask(QUESTION)
    assert before.search_index.dense[ARM].embedded == arm.from_index
    assert again.to_dict() == answer.to_dict()


def test_vectors_follow_their_segments_through_commits(tmp_path):
    store = SegmentStore.create(tmp_path / "ix", dim=4, model_id="m")
    keys = np.eye(4, dtype=np.float32)
    store.add([SegmentEntry(f"{d}:0", d, 0, "OTHER") for d in "abcd"], keys)
    vecs = np.random.default_rng(0).standard_normal((3, 384)).astype(np.float32)
    store.add_sentence_vectors(["a:0", "b:0", "c:0"], ["A", "B", "C"], vecs)
    store.commit()
    reopened = SegmentStore.open(tmp_path / "ix")
    stored = read_sentence_vectors(tmp_path / "ix")
    assert set(stored) == {"a:0", "b:0", "c:0"} and np.array_equal(stored["b:0"][1], vecs[1])
    assert reopened.has_sentence_vector("a:0", "A") and not reopened.has_sentence_vector("a:0", "changed")
    reopened.delete_document("a")
    reopened.commit()
    assert set(read_sentence_vectors(tmp_path / "ix")) == {"b:0", "c:0"}
    writer = SegmentStore.open(tmp_path / "ix")
    writer.add_sentence_vectors(["d:0"], ["D"], vecs[:1])
    assert set(read_sentence_vectors(tmp_path / "ix")) == {"b:0", "c:0"}  # not visible before its commit
    writer.commit()
    gen = writer.manifest["generation"]
    assert set(read_sentence_vectors(tmp_path / "ix")) == {"b:0", "c:0", "d:0"}
    assert [p.name for p in (tmp_path / "ix").glob("minilm-*")] == [file_name(gen)]
    for doc in "bcd":
        writer.delete_document(doc)
    writer.commit()  # no vectors left: no file, and the manifest names none
    assert not list((tmp_path / "ix").glob("minilm-*")) and "sentence_model" not in writer.manifest


def test_embedding_in_small_cpu_batches_gives_the_vectors_of_one_large_batch(shared_data):
    """`embed` pads each batch to its longest text; its small CPU batches change only the padding."""
    from retrieval.sentence import CPU_BATCH, embed

    record = json.loads(_shortest_ewca_record(shared_data))
    texts = [p["text"] for p in record["paragraphs"]][:40]
    assert len(texts) > 2 * CPU_BATCH and len({len(t) for t in texts}) > CPU_BATCH
    small, large = embed(texts), embed(texts, batch_size=len(texts))
    assert small.shape == large.shape
    assert np.allclose(small, large, atol=1e-5)
    assert np.allclose(np.linalg.norm(small, axis=1), 1.0, atol=1e-5)
