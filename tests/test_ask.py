"""`ldx ask --json` with the shipped encoder and reader over a small real indexed run (a 人民法院案例库 PDF):
a real answer read from a cited segment, and citations that match the Parquet segments and the PDF."""

from __future__ import annotations

import json

import pymupdf
import pytest
from run_tables import write_run_tables
from typer.testing import CliRunner

from pipeline.store import open_duckdb
from retrieval.encoder import checkpoint_file, load_encoder, sha256_file
from retrieval.stage import index_segments

PDF = "zh/pdf/杨某海交通肇事案.pdf"


@pytest.fixture(scope="module")
def indexed_case(shared_data, tmp_path_factory, torch_one_thread):
    """OUT_DIR with the tables `ldx run` writes for one real PDF, indexed by the shipped encoder."""
    out = tmp_path_factory.mktemp("run")
    doc, segments = write_run_tables(out, shared_data / PDF)
    ckpt = checkpoint_file(None)
    model, tok = load_encoder(ckpt, "cpu")
    index_segments(out, [segments], model, tok, model_id=sha256_file(ckpt))
    return out, doc


def test_ask_json_answers_from_a_cited_segment(indexed_case, shared_data):
    from flows.cli import app

    out, doc = indexed_case
    # naming no defendant, the question is the reader's (杨某海犯什么罪 is read from the ruling the report quotes)
    res = CliRunner().invoke(app, ["ask", "被告人犯什么罪？", "--index", str(out), "--k", "5", "--json"])
    assert res.exit_code == 0, res.output
    answer = json.loads(res.output)
    assert answer["reader"].endswith("reader.pt") and answer["answer"] != "none"
    assert 0 < answer["answer_score"] <= 1
    cites = {c["segment_id"]: c for c in answer["citations"]}
    assert len(cites) == 5 and answer["answer_segment"] in cites
    assert answer["answer"] in cites[answer["answer_segment"]]["text"]
    assert "交通肇事罪" in answer["answer"]
    texts = dict(open_duckdb(out).execute("SELECT segment_id, text FROM segments").fetchall())
    pdf = pymupdf.open(shared_data / PDF)
    for c in cites.values():
        assert c["doc_id"] == doc.doc_id and texts[c["segment_id"]] == c["text"]
        assert 0 <= c["page"] < pdf.page_count
        x0, y0, x1, y1 = c["bbox"]
        rect = pdf[c["page"]].rect
        assert -1 <= x0 < x1 <= rect.width + 1 and -1 <= y0 < y1 <= rect.height + 1


def test_ask_refuses_a_reader_trained_on_another_encoder(indexed_case, tmp_path):
    from flows.cli import app
    from retrieval.reader.runtime import Reader, ReaderConfig, ReaderHead

    out, _ = indexed_case
    head = tmp_path / "other.pt"
    Reader(ReaderHead(ReaderConfig(256)), None, None).save(head, "f" * 64, {})
    res = CliRunner().invoke(
        app, ["ask", "谁是被告人？", "--index", str(out), "--reader", str(head), "--json"]
    )
    assert res.exit_code != 0 and "trained on encoder ffffffffffff" in res.output
