"""Chinese judgments for the route tests: paragraphs written for a test as passages of one block type, a
CLCR record's text by its id, and that text parsed as `ldx ask` reads it, one passage per block."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pipeline
from retrieval.hybrid import Passage

CLCR = "zh/judgments/clcr_cases.jsonl.gz"


def paragraphs(block_type: str, *texts: str, doc: str = "z") -> list[Passage]:
    """The texts as passages of one document, each a block of `block_type`, ids `doc:0`, `doc:1`, …"""
    return [Passage(f"{doc}:{i}", doc, text, block_type) for i, text in enumerate(texts)]


def clcr_text(shared_data: Path, prefix: str) -> str:
    """The text of the CLCR record whose id starts with `prefix`."""
    with gzip.open(shared_data / CLCR, "rt", encoding="utf-8") as f:
        return next(r["text"] for r in map(json.loads, f) if r["id"].startswith(prefix))


def clcr_passages(shared_data: Path, tmp_path: Path, prefix: str) -> list[Passage]:
    """That record parsed, one passage per block."""
    src = tmp_path / f"{prefix}.txt"
    src.write_text(clcr_text(shared_data, prefix), encoding="utf-8")
    doc = pipeline.parse(src)
    return [Passage(f"b{i}", "d", b.text, b.type.value) for i, b in enumerate(doc.blocks)]
