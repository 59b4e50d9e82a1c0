"""The run flow with its default stages (encode + index, predict) on the demo samples and the shipped model."""

from __future__ import annotations

from pathlib import Path

import faiss
import pytest

from pipeline.store import open_duckdb

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"


@pytest.fixture(scope="module")
def full_run(prefect_harness, tmp_path_factory):
    from flows.run import run_flow
    from retrieval.encoder import checkpoint_file

    if checkpoint_file(None) is None:
        pytest.fail("no shipped checkpoint in data/models/")
    out = tmp_path_factory.mktemp("full") / "out"
    return out, run_flow(str(SAMPLES), str(out), {"run": {"batch_size": 2, "workers": 2}})


def test_index_ids_are_the_parquet_segment_ids(full_run):
    from retrieval.store import SegmentStore, segment_key_id

    out, manifest = full_run
    assert manifest["status"] == "completed"
    con = open_duckdb(out)
    segment_ids = {r[0] for r in con.execute("SELECT segment_id FROM segments").fetchall()}
    assert len(segment_ids) == manifest["counts"]["segments"] > 50
    store = SegmentStore.open(out / "index")
    assert {e["segment_id"] for e in store.entries()} == segment_ids
    # the FAISS ids themselves, read from the index file (IndexIDMap2 by default), are exactly those segments'
    index = faiss.read_index(str(next((out / "index").glob("*.faiss"))))
    assert set(faiss.vector_to_array(index.id_map).tolist()) == {segment_key_id(s) for s in segment_ids}


def test_predictions_cite_existing_segments(full_run):
    out, manifest = full_run
    con = open_duckdb(out)
    tasks = dict(con.execute("SELECT task, count(*) FROM predictions GROUP BY task").fetchall())
    n_segments = manifest["counts"]["segments"]
    judgment_segments = con.execute(
        "SELECT count(*) FROM segments s JOIN documents d USING (doc_id) "
        "WHERE d.kind IN ('zh_judgment', 'en_judgment')"
    ).fetchone()[0]
    # one role per segment of a judgment; the patent keeps its rule types and gets its claim tree
    assert tasks["block_role"] == judgment_segments < n_segments
    assert tasks["claim_tree"] >= 1
    assert tasks["proviso"] >= 1  # the civil judgment's 但…的除外 and the patent's "provided that"
    # the criminal sample applies 刑法 264, 67, 52 and 53: the article head must find the theft article
    articles = con.execute("SELECT values FROM predictions WHERE task = 'articles'").fetchall()
    assert articles and "264" in articles[0][0]
    dangling = con.execute(
        "SELECT count(*) FROM (SELECT unnest(evidence).segment_id AS sid FROM predictions) e "
        "WHERE sid IS NOT NULL AND sid NOT IN (SELECT segment_id FROM segments)"
    ).fetchone()[0]
    assert dangling == 0


def test_rerun_encodes_nothing_again_and_keeps_the_index(full_run):
    from flows.run import run_flow
    from retrieval.store import SegmentStore

    out, first = full_run
    before = {e["segment_id"] for e in SegmentStore.open(out / "index").entries()}
    again = run_flow(str(SAMPLES), str(out), {"run": {"batch_size": 2, "workers": 2}})
    assert again["counts"]["cached_files"] == again["counts"]["files"] == first["counts"]["files"]
    assert again["counts"]["index"]["indexed_documents"] == 0
    assert again["counts"]["index"]["kept_documents"] == first["counts"]["documents"]
    assert {e["segment_id"] for e in SegmentStore.open(out / "index").entries()} == before
