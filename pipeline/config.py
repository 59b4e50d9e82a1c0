"""Typed options of the pipeline stages (parse, segment). Defaults live here, in code."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Options(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ParseConfig(Options):
    page_limit: int = 2000  # documents with more pages are refused as one clear error
    ocr: bool = True  # OCR pages without a text layer through Tesseract
    ocr_language: str = "chi_sim+eng"
    ocr_dpi: int = 300
    ocr_max_pages: int | None = None  # OCR at most this many pages per document (None = all); others warn
    jsonl_text_field: str = "text"
    jsonl_id_field: str | None = None
    kind: str | None = None  # force a document kind instead of detecting it


class SegmentConfig(Options):
    max_tokens: int = 384
    tokenizer: str | None = None  # path to a tokenizer.json; None = the shipped one in data/
    pack_tiny: bool = False  # pack consecutive tiny blocks of the same type into one segment
    tiny_tokens: int = 32
    connective_clause: bool = False  # mark the clause a connective opens, not only the connective
    connectives: list[str] | None = None  # lexicon; None = the built-in zh+en one (pipeline.connectives)
