"""Crash safety at exact points: `ldx run` with the index stage, killed (SIGKILL, through LDX_FAULT in
pipeline.process.fault_point) inside each stage of its work, never hangs, and a plain rerun ends with
the rows and the index of an uninterrupted run."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import tiny_models

from flows.manifest import read_manifest
from pipeline.tokenizer import load_tokenizer
from retrieval.config import RetrievalConfig
from retrieval.stage import open_or_create
from retrieval.store import SegmentStore
from retrieval.store_vectors import read_sentence_vectors
from tests.test_flow import rows
from tests.test_flow_crash import TABLES, _start

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
STAGES = '["index"]'
# the store's first commit is its creation; ":2" is the run's own commit of what it encoded (the first
# commit with sentence vectors to write). Each point costs the suite two runs (about a minute), so a point whose
# state another point or a unit test covers is left out: "parse" and "segment" (the run's own process dies
# before its first batch reaches the index process: test_flow_crash's kills and test_cli_run_server's ended
# index process), "faiss_write" (the store's creation killed before its manifest:
# test_a_store_whose_creation_was_killed_is_made_anew below), "index_build" (the index process dies before its
# commit, which "faiss_write:2" also does, after the commit has begun writing) and "parquet_write:2" (the new
# generation's keys and metadata written, the manifest not yet switched, which "sentence_write" also leaves,
# with a half-written vectors file besides).
POINTS = ("faiss_write:2", "sentence_write", "manifest_write:2")


@pytest.fixture(scope="module")
def setup(prefect_harness, tmp_path_factory):
    from prefect.settings import PREFECT_API_URL

    from flows.run import run_flow

    root = tmp_path_factory.mktemp("kill")
    corpus = root / "in"
    corpus.mkdir()
    for name in ("en_appellate_judgment.pdf", "zh_civil_judgment.pdf"):
        (corpus / name).symlink_to(SAMPLES / name)
    (corpus / "empty.txt").write_bytes(b"")  # an errors row too
    clean = root / "clean"
    run_flow(str(corpus), str(clean), {"run": {"batch_size": 1, "stages": ["index"]}})
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_LOGGING_LEVEL": "WARNING"}
    return corpus, clean, env


def _index(out: Path) -> tuple[list[tuple], np.ndarray, list[str], np.ndarray]:
    """The store's entries and keys, and the segments with a sentence-model vector and those vectors."""
    store = SegmentStore.open(out / "index")
    entries = store.entries()
    keys = store.keys([e["segment_id"] for e in entries])
    vectors = read_sentence_vectors(out / "index")
    with_vector = sorted(vectors)
    matrix = np.stack([vectors[s][1] for s in with_vector]) if with_vector else np.zeros((0, 384))
    return [tuple(v for k, v in e.items() if k != "slot") for e in entries], keys, with_vector, matrix


@pytest.mark.parametrize("point", POINTS)
def test_a_run_killed_at_a_point_reruns_to_the_outputs_of_an_uninterrupted_run(setup, tmp_path, point):
    corpus, clean, env = setup
    out = tmp_path / "out"
    killed = _start(corpus, out, {**env, "LDX_FAULT": point}, STAGES)
    code = killed.wait(timeout=300)  # a dead index process must not leave the run waiting on its queue
    err = killed.stderr.read()
    # the run's own process dies at parse and segment; at the others its index process dies, and the run says so
    assert code == -9 or "the index process failed" in err, f"LDX_FAULT={point}: exit {code}, {err[-2000:]}"
    rerun = _start(corpus, out, env, STAGES)
    assert rerun.wait(timeout=300) == 0, rerun.stderr.read()[-3000:]

    want, got = read_manifest(clean), read_manifest(out)
    assert got["status"] == "completed"
    for table in TABLES:
        assert rows(out, table, got["run_id"]) == rows(clean, table, want["run_id"]), table
    want_entries, want_keys, want_ids, want_vectors = _index(clean)
    got_entries, got_keys, got_ids, got_vectors = _index(out)
    assert got_entries == want_entries and len(want_entries) > 0
    np.testing.assert_allclose(got_keys, want_keys, atol=1e-5)
    # one sentence vector per English segment, none lost or doubled by the kill and the resume
    assert got_ids == want_ids and 0 < len(want_ids) < len(want_entries)
    np.testing.assert_allclose(got_vectors, want_vectors, atol=1e-5)
    left = sorted(p.name for p in (out / "index").iterdir())
    assert [n for n in left if n.startswith(".")] == [], left  # nothing half-written stays behind


def test_a_writer_discards_a_generation_the_manifest_never_named(tmp_path):
    """What a commit killed between its writes leaves (the next generation's files, temporary files) is
    removed when the next writer opens the store; the committed generation reads as before."""
    from retrieval.store import SegmentEntry

    rng = np.random.default_rng(0)
    keys = rng.standard_normal((6, 8)).astype(np.float32)
    keys /= np.linalg.norm(keys, axis=1, keepdims=True)
    store = SegmentStore.create(tmp_path / "ix", dim=8, model_id="m")
    store.add([SegmentEntry(f"d:{i}", "d", i, "OTHER") for i in range(6)], keys)
    store.commit()
    gen = store.manifest["generation"]
    left = [
        f"keys-{gen + 1}.faiss",
        f"meta-{gen + 1}.parquet",
        f".keys-{gen + 1}.faiss.tmp",
        ".manifest.json.x1.tmp",
    ]
    for name in left:
        (tmp_path / "ix" / name).write_bytes(b"half-written")
    again = SegmentStore.open(tmp_path / "ix")
    again.discard_uncommitted()
    assert not [n for n in left if (tmp_path / "ix" / n).exists()]
    assert again.manifest["model_id"] == "m" and len(again) == 6
    assert again.search(keys[2], k=1)[0][0][0] == "d:2"
    again.commit()
    assert len(SegmentStore.open(tmp_path / "ix", mmap=True)) == 6


def test_a_store_whose_creation_was_killed_is_made_anew(tmp_path):
    """A run killed inside the store's first commit leaves its files half-written and no manifest: the
    next run's index stage creates the store afresh and the half-written files are gone."""
    root = tmp_path / "index"
    root.mkdir()
    left = ["keys-0.faiss", "meta-0.parquet", ".keys-0.faiss.tmp", ".manifest.json.x1.tmp"]
    for name in left:
        (root / name).write_bytes(b"half-written")
    model = tiny_models.tiny_encoder(load_tokenizer())
    store = open_or_create(root, model, RetrievalConfig(), "m")
    assert store.manifest["model_id"] == "m" and len(store) == 0
    assert not [n for n in left if n.startswith(".") and (root / n).exists()]
    again = SegmentStore.open(root)
    assert again.manifest["generation"] == store.manifest["generation"] and len(again) == 0
