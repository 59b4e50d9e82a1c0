"""An OUT_DIR with the Parquet tables `ldx run` writes, for one real document, built without the flow
so the retrieval tests do not depend on it."""

from __future__ import annotations

from pathlib import Path

import pipeline
from pipeline.records import Document, Segment, block_rows, document_rows, segment_rows
from pipeline.store import OutputStore


def write_run_tables(out: Path, pdf: Path, run_id: str = "r1") -> tuple[Document, list[Segment]]:
    doc = pipeline.parse(pdf)
    segments = pipeline.segment(doc)
    store = OutputStore(out, run_id)
    store.write("documents", document_rows(doc, run_id), doc.doc_id)
    store.write("blocks", block_rows(doc.blocks, run_id), doc.doc_id)
    store.write("segments", segment_rows(segments, run_id), doc.doc_id)
    return doc, segments


def write_texts(out: Path, texts: dict[str, str]) -> dict[str, str]:
    """Name -> doc_id of each text, written as `name.txt` and parsed into `out`'s tables."""
    ids = {}
    for name, text in texts.items():
        path = out / f"{name}.txt"
        path.write_text(text, encoding="utf-8")
        ids[name] = write_run_tables(out, path)[0].doc_id
    return ids
