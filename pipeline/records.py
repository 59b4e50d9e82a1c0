"""The records every stage exchanges (DESIGN.md), with the Arrow schemas they are stored under."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path

import pyarrow as pa

SCHEMA_VERSION = "1"


class BlockType(StrEnum):
    HEADER = "HEADER"
    PARTIES = "PARTIES"
    PROCEDURE = "PROCEDURE"
    CLAIMS = "CLAIMS"
    DEFENSE = "DEFENSE"
    FACTS = "FACTS"
    OPINION = "OPINION"
    VERDICT = "VERDICT"
    NOTICE = "NOTICE"
    SIGNATURE = "SIGNATURE"
    APPENDIX = "APPENDIX"
    ABSTRACT = "ABSTRACT"
    CLAIM = "CLAIM"
    FIELD = "FIELD"
    BACKGROUND = "BACKGROUND"
    SUMMARY = "SUMMARY"
    DRAWINGS = "DRAWINGS"
    DESCRIPTION = "DESCRIPTION"
    DEFINITIONS = "DEFINITIONS"
    CLAUSE = "CLAUSE"
    OTHER = "OTHER"


# Stable integer ids for the model's block-type tags; the order is part of the checkpoint contract.
BLOCK_TYPE_IDS: dict[BlockType, int] = {t: i for i, t in enumerate(BlockType)}


class DocKind(StrEnum):
    ZH_JUDGMENT = "zh_judgment"
    EN_JUDGMENT = "en_judgment"
    PATENT = "patent"
    CONTRACT = "contract"
    GENERIC = "generic"


def doc_id_for_bytes(data: bytes) -> str:
    """Stable document id: the first 16 hex chars of the source bytes' sha256."""
    return hashlib.sha256(data).hexdigest()[:16]


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in chunks (documents, checkpoints, caches all key on it)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def doc_id_for_file(path: str | Path) -> str:
    return sha256_file(path)[:16]


@dataclass
class Party:
    name: str
    role: str  # e.g. 被告人, 原告, appellant, assignee


@dataclass
class DocMeta:
    """Header metadata; every field is optional because documents vary in what they state."""

    court: str | None = None
    case_number: str | None = None
    date: dt.date | None = None
    doc_type: str | None = None  # 判决书 / 裁定书 / 调解书, "judgment", "patent grant" ...
    cause: str | None = None  # 案由, cause of action
    citation: str | None = None  # neutral citation, e.g. [2020] EWCA Civ 1
    judges: list[str] = field(default_factory=list)
    parties: list[Party] = field(default_factory=list)
    patent_number: str | None = None
    filing_date: dt.date | None = None
    classes: list[str] = field(default_factory=list)


@dataclass
class Block:
    doc_id: str
    block_idx: int
    type: BlockType
    text: str
    char_start: int
    char_end: int
    page: int | None = None  # 0-based; None for non-paged inputs
    bbox: tuple[float, float, float, float] | None = None  # top-left origin, PDF points
    ocr: bool = False
    # (page, bbox) for every page the block covers, in reading order; the first is `page`/`bbox`.
    # Empty for non-paged inputs.
    spans: list[tuple[int, tuple[float, float, float, float]]] = field(default_factory=list)


@dataclass
class Document:
    doc_id: str
    source: str
    kind: DocKind
    language: str  # "zh", "en", ...
    text: str  # block offsets point into this string
    title: str | None = None
    n_pages: int | None = None
    meta: DocMeta = field(default_factory=DocMeta)
    warnings: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Segment:
    doc_id: str
    seg_idx: int
    block_idx: int
    type: BlockType
    text: str
    n_tokens: int
    char_start: int
    char_end: int
    # character spans (relative to the segment text) of logical connectives and provisos
    connectives: list[tuple[int, int]] = field(default_factory=list)

    @property
    def segment_id(self) -> str:
        return f"{self.doc_id}:{self.seg_idx}"


def segment_place(segment_id: str) -> tuple[str, int]:
    """(doc_id, seg_idx) of a `Segment.segment_id`; (segment_id, 0) for an id without its index."""
    doc, _, n = segment_id.rpartition(":")
    return (doc, int(n)) if n.isdigit() else (segment_id, 0)


@dataclass
class Evidence:
    segment_id: str | None
    char_start: int | None
    char_end: int | None
    text: str | None = None
    # where the words are on the page (the block holding them), for paged inputs; None elsewhere
    page: int | None = None  # 0-based
    bbox: list[float] | None = None  # top-left origin, PDF points


@dataclass
class Prediction:
    doc_id: str
    task: str
    value: str
    score: float
    model_id: str
    segment_id: str | None = None
    values: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class ErrorRecord:
    source: str
    stage: str
    error_type: str
    reason: str
    doc_id: str | None = None


# ---- Arrow schemas -------------------------------------------------------------------------------

_BLOCK_TYPE = pa.dictionary(pa.int8(), pa.string())
_SPAN = pa.struct([("start", pa.int32()), ("end", pa.int32())])
_PAGE_BOX = pa.struct([("page", pa.int32()), ("bbox", pa.list_(pa.float32(), 4))])
_PARTY = pa.struct([("name", pa.string()), ("role", pa.string())])
_META = pa.struct(
    [
        ("court", pa.string()),
        ("case_number", pa.string()),
        ("date", pa.date32()),
        ("doc_type", pa.string()),
        ("cause", pa.string()),
        ("citation", pa.string()),
        ("judges", pa.list_(pa.string())),
        ("parties", pa.list_(_PARTY)),
        ("patent_number", pa.string()),
        ("filing_date", pa.date32()),
        ("classes", pa.list_(pa.string())),
    ]
)
_EVIDENCE = pa.struct(
    [
        ("segment_id", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("text", pa.string()),
        ("page", pa.int32()),
        ("bbox", pa.list_(pa.float32(), 4)),
    ]
)
RUN_ID = pa.field("run_id", pa.string(), nullable=False)

SCHEMAS: dict[str, pa.Schema] = {
    "documents": pa.schema(
        [
            pa.field("doc_id", pa.string(), nullable=False),
            ("source", pa.string()),
            ("kind", pa.string()),
            ("language", pa.string()),
            ("title", pa.string()),
            ("n_pages", pa.int32()),
            ("n_chars", pa.int64()),
            ("n_blocks", pa.int32()),
            ("meta", _META),
            ("warnings", pa.list_(pa.string())),
            ("text", pa.large_string()),
            RUN_ID,
        ]
    ),
    "blocks": pa.schema(
        [
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("block_idx", pa.int32(), nullable=False),
            ("type", _BLOCK_TYPE),
            ("text", pa.large_string()),
            ("page", pa.int32()),
            ("bbox", pa.list_(pa.float32(), 4)),
            ("spans", pa.list_(_PAGE_BOX)),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("ocr", pa.bool_()),
            RUN_ID,
        ]
    ),
    "segments": pa.schema(
        [
            pa.field("segment_id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("seg_idx", pa.int32(), nullable=False),
            ("block_idx", pa.int32()),
            ("type", _BLOCK_TYPE),
            ("text", pa.large_string()),
            ("n_tokens", pa.int32()),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("connectives", pa.list_(_SPAN)),
            RUN_ID,
        ]
    ),
    "predictions": pa.schema(
        [
            pa.field("doc_id", pa.string(), nullable=False),
            ("segment_id", pa.string()),
            pa.field("task", pa.string(), nullable=False),
            ("value", pa.string()),
            ("values", pa.list_(pa.string())),
            ("score", pa.float32()),
            ("model_id", pa.string()),
            ("evidence", pa.list_(_EVIDENCE)),
            RUN_ID,
        ]
    ),
    "errors": pa.schema(
        [
            ("doc_id", pa.string()),
            ("source", pa.string()),
            ("stage", pa.string()),
            ("error_type", pa.string()),
            ("reason", pa.string()),
            RUN_ID,
        ]
    ),
}


def _meta_row(meta: DocMeta) -> dict:
    row = asdict(meta)
    row["parties"] = [{"name": p.name, "role": p.role} for p in meta.parties]
    return row


def document_rows(doc: Document, run_id: str) -> list[dict]:
    return [
        {
            "doc_id": doc.doc_id,
            "source": doc.source,
            "kind": str(doc.kind),
            "language": doc.language,
            "title": doc.title,
            "n_pages": doc.n_pages,
            "n_chars": len(doc.text),
            "n_blocks": len(doc.blocks),
            "meta": _meta_row(doc.meta),
            "warnings": list(doc.warnings),
            "text": doc.text,
            "run_id": run_id,
        }
    ]


def block_rows(blocks: list[Block], run_id: str) -> list[dict]:
    return [
        {
            "doc_id": b.doc_id,
            "block_idx": b.block_idx,
            "type": str(b.type),
            "text": b.text,
            "page": b.page,
            "bbox": list(b.bbox) if b.bbox is not None else None,
            "spans": [{"page": page, "bbox": list(box)} for page, box in b.spans],
            "char_start": b.char_start,
            "char_end": b.char_end,
            "ocr": b.ocr,
            "run_id": run_id,
        }
        for b in blocks
    ]


def segment_rows(segments: list[Segment], run_id: str) -> list[dict]:
    return [
        {
            "segment_id": s.segment_id,
            "doc_id": s.doc_id,
            "seg_idx": s.seg_idx,
            "block_idx": s.block_idx,
            "type": str(s.type),
            "text": s.text,
            "n_tokens": s.n_tokens,
            "char_start": s.char_start,
            "char_end": s.char_end,
            "connectives": [{"start": a, "end": b} for a, b in s.connectives],
            "run_id": run_id,
        }
        for s in segments
    ]


def prediction_rows(preds: list[Prediction], run_id: str) -> list[dict]:
    return [
        {
            "doc_id": p.doc_id,
            "segment_id": p.segment_id,
            "task": p.task,
            "value": p.value,
            "values": list(p.values),
            "score": p.score,
            "model_id": p.model_id,
            "evidence": [asdict(e) for e in p.evidence],
            "run_id": run_id,
        }
        for p in preds
    ]


def error_rows(errors: list[ErrorRecord], run_id: str) -> list[dict]:
    return [{**{f.name: getattr(e, f.name) for f in fields(e)}, "run_id": run_id} for e in errors]


def to_table(name: str, rows: list[dict]) -> pa.Table:
    """Rows to an Arrow table under the table's explicit schema (types are checked, never inferred)."""
    return pa.Table.from_pylist(rows, schema=SCHEMAS[name])
