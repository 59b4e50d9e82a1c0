"""An OUT_DIR with the Parquet tables `ldx run` writes, for one real document, built without the flow
so the retrieval tests do not depend on it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pipeline
from pipeline.records import Document, Segment, block_rows, document_rows, segment_rows
from pipeline.store import OutputStore
from retrieval.hybrid import Passage
from retrieval.outcome_questions import blockwise

CLCR = "zh/judgments/clcr_cases.jsonl.gz"


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


def clcr_blocks(
    shared_data: Path, out: Path, records: dict[str, str]
) -> dict[str, tuple[list[Passage], str]]:
    """Name -> (one passage per block, the case number) of each CLCR record (`records`: name -> the start of
    its id), parsed and segmented as `ldx run` reads it."""
    with gzip.open(shared_data / CLCR, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    read = {}
    for name, prefix in records.items():
        path = out / f"{name}.txt"
        path.write_text(next(r["text"] for r in rows if r["id"].startswith(prefix)), encoding="utf-8")
        doc = pipeline.parse(path)
        segments = pipeline.segment(doc)
        passages = [Passage(s.segment_id, doc.doc_id, s.text, s.type.value) for s in segments]
        block_of = {s.segment_id: s.block_idx for s in segments}
        read[name] = (blockwise(passages, block_of.__getitem__), doc.meta.case_number or "")
    return read
