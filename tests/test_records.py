"""Records → Arrow → Parquet → DuckDB and back, with every field keeping its type."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
import pytest

from pipeline.records import (
    SCHEMAS,
    Block,
    BlockType,
    DocKind,
    DocMeta,
    Document,
    ErrorRecord,
    Evidence,
    Party,
    Prediction,
    Segment,
    block_rows,
    doc_id_for_bytes,
    doc_id_for_file,
    document_rows,
    error_rows,
    prediction_rows,
    segment_rows,
    to_table,
)
from pipeline.store import OutputStore, open_duckdb


def _document() -> Document:
    text = "北京市海淀区人民法院\n\n本院认为，被告人张某的行为构成盗窃罪。"
    meta = DocMeta(
        court="北京市海淀区人民法院",
        case_number="（2017）京0108刑初684号",
        date=dt.date(2017, 6, 1),
        doc_type="判决书",
        judges=["李某"],
        parties=[Party(name="张某", role="被告人")],
        classes=["G06F 17/30"],
    )
    doc = Document(
        doc_id=doc_id_for_bytes(text.encode()),
        source="a.pdf",
        kind=DocKind.ZH_JUDGMENT,
        language="zh",
        text=text,
        title="张某盗窃案",
        n_pages=1,
        meta=meta,
        warnings=["ocr page 1"],
    )
    doc.blocks = [
        Block(doc.doc_id, 0, BlockType.HEADER, text[:10], 0, 10, page=0, bbox=(1.0, 2.0, 3.0, 4.0)),
        Block(doc.doc_id, 1, BlockType.OPINION, text[12:], 12, len(text), page=0, bbox=None, ocr=True),
    ]
    return doc


def test_doc_id_is_sha256_prefix(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"abc")
    assert doc_id_for_file(path) == doc_id_for_bytes(b"abc") == "ba7816bf8f01cfea"


def test_round_trip_parquet_and_duckdb(tmp_path):
    doc = _document()
    seg = Segment(doc.doc_id, 0, 1, BlockType.OPINION, doc.blocks[1].text, 9, 12, len(doc.text), [(0, 4)])
    pred = Prediction(
        doc.doc_id,
        "articles",
        "264",
        0.9,
        "m1",
        segment_id=seg.segment_id,
        values=["264", "67"],
        evidence=[Evidence(seg.segment_id, 0, 4, "本院认为")],
    )
    err = ErrorRecord("bad.pdf", "parse", "CorruptDocument", "truncated", None)
    store = OutputStore(tmp_path, run_id="r1", model_id="abc")
    store.write("documents", document_rows(doc, "r1"), doc.doc_id)
    store.write("blocks", block_rows(doc.blocks, "r1"), doc.doc_id)
    store.write("segments", segment_rows([seg], "r1"), doc.doc_id)
    store.write("predictions", prediction_rows([pred], "r1"), doc.doc_id)
    store.write("errors", error_rows([err], "r1"), "bad")

    for name in SCHEMAS:
        [path] = (tmp_path / name).glob("run_id=r1/*.parquet")
        table = pq.read_table(path)
        assert table.schema.remove_metadata().equals(SCHEMAS[name]), name
        meta = pq.read_metadata(path).metadata
        assert meta[b"schema_version"] and meta[b"pipeline_version"] and meta[b"model_id"] == b"abc"

    con = open_duckdb(tmp_path)
    row = con.execute(
        "select meta.date, meta.parties[1].role, n_pages, warnings, run_id from documents"
    ).fetchone()
    assert row == (dt.date(2017, 6, 1), "被告人", 1, ["ocr page 1"], "r1")
    types = dict(con.execute("select column_name, column_type from (describe blocks)").fetchall())
    # the views read the parts through the Arrow schema, whose bbox is a fixed-size list of 4
    assert (
        types["bbox"] == "FLOAT[4]"
        and types["type"] == "VARCHAR"
        and types["char_start"] == "BIGINT"
        and types["ocr"] == "BOOLEAN"
    )
    assert con.execute("select type, bbox from blocks order by block_idx").fetchall() == [
        ("HEADER", (1.0, 2.0, 3.0, 4.0)),  # a DuckDB ARRAY comes back as a tuple
        ("OPINION", None),
    ]
    assert con.execute("select segment_id, connectives[1].end from segments").fetchone() == (
        f"{doc.doc_id}:0",
        4,
    )
    assert con.execute("select values, evidence[1].text from predictions").fetchone() == (
        ["264", "67"],
        "本院认为",
    )
    assert con.execute("select error_type, doc_id from errors").fetchone() == ("CorruptDocument", None)


def test_schema_rejects_wrong_types():
    with pytest.raises((TypeError, ValueError)):
        to_table("blocks", [{"doc_id": "d", "block_idx": "not an int", "run_id": "r"}])
