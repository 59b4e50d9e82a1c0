"""Typed options of the pipeline stages (parse, segment), and the `key=value` overrides every config
(`ldx --set`, the training config) takes. Defaults live here, in code."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ConfigError(ValueError):
    """A config file or override that cannot be applied; the message names the file or key."""


def parse_value(raw: str):
    """An override's value: JSON (numbers, booleans, arrays, quoted strings), else the bare string."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw  # a bare string such as cuda or chi_sim+eng


def apply_overrides(
    data: dict, overrides: Iterable[str] | None, min_depth: int = 1, example: str = ""
) -> dict:
    """Set each `a.b.c=value` into the nested tables of `data` (in place; returned too). A key needs at
    least `min_depth` dotted names: 2 where every key lives in a section (`segment.max_tokens=256`)."""
    for item in overrides or ():
        key, sep, raw = item.partition("=")
        names = [name.strip() for name in key.split(".")]
        if not sep or len(names) < min_depth or not all(names):
            form = "section.key=value" if min_depth > 1 else "key=value"
            raise ConfigError(
                f"override {item!r}: expected {form}" + (f", e.g. {example}" if example else "")
            )
        table = data
        for name in names[:-1]:
            table = table.setdefault(name, {})
            if not isinstance(table, dict):
                raise ConfigError(f"override {item!r}: {name} is a value, not a table")
        table[names[-1]] = parse_value(raw.strip())
    return data


class Options(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


OcrEngine = Literal["tesseract", "rapidocr"]


class ParseConfig(Options):
    page_limit: int = 2000  # documents with more pages are refused as one clear error
    ocr: bool = True  # OCR pages without a text layer (engines: pipeline/parsing/ocr.py)
    ocr_language: str = "chi_sim+eng"  # Tesseract's; with chi_sim, OCR expects Chinese on a first page
    # Engine per page language (pipeline/parsing/ocr.py). benchmarks/ocr_accuracy.py --pages 6, 200-dpi scans
    # of the shared text PDFs read at 300 dpi, one core of a busy 2-core machine (rates indicative): zh
    # RapidOCR 99.59% of characters at 0.09 pages/s vs Tesseract (binary) 84.14% at 0.26; en Tesseract
    # (binary) 99.55% at 0.30 vs RapidOCR 99.27% at 0.06.
    ocr_engine_zh: OcrEngine = "rapidocr"
    ocr_engine_en: OcrEngine = "tesseract"
    # Through PyMuPDF (ocr_tesseract "pymupdf"), --pages 6, en, Tesseract: 99.12% at 300 dpi, 99.06% at 400;
    # with ocr_language "eng" also 99.12% and faster, but an English-only Tesseract cannot tell a Chinese
    # page to send it to RapidOCR, so chi_sim stays for mixed corpora. An English page whose reading holds
    # Han characters (marks read as Chinese) is read again with the Latin languages alone (ocr.PageOcr):
    # benchmarks/ocr_accuracy.py --pages 24 --langs en --configs tesseract --interleave 98.56% -> 98.71%.
    # Of the body text the parser keeps (its furniture pass reading each page with the two after it, the
    # text layer and the scans alike) the same run reads 99.63%; 98.85% with the parser before rules,
    # caption asterisks, clerks' stamps and cut filing headers went (benchmarks/ocr_accuracy.txt).
    ocr_dpi: int = 300
    # How Tesseract runs: "binary", the `tesseract` program on the rendered page (pipeline/parsing/
    # tesseract.py), which takes the options below; "pymupdf", PyMuPDF's OCR call (its own segmentation).
    # --pages 6, en: binary 99.55% at 0.30 pages/s, PyMuPDF 99.12% at 0.15 (chi_sim+eng both).
    ocr_tesseract: Literal["binary", "pymupdf"] = "binary"
    ocr_tesseract_binary: str = "tesseract"  # a name on PATH or a path
    # --psm, page segmentation mode (0 finds no text). --pages 6: en 99.55% with 3 (layout analysis), 99.52%
    # with 4, 99.42% with 6 (one block: TessBaseAPI's default, kept by PyMuPDF's call); zh 84.14% with 3,
    # 89.57% with 6, but zh pages go to RapidOCR.
    ocr_tesseract_psm: int = Field(3, ge=1, le=13)
    ocr_tesseract_vars: dict[str, str] = {}  # -c name=value, Tesseract's own parameters
    # A line is kept when one of its words has this confidence (0-100); below, it is noise read from a
    # picture or a rule. --pages 6, en: 99.55% with 50, 99.43% keeping every line.
    ocr_tesseract_min_conf: float = 50.0
    # Fill-in blanks ("made this _____ day of") put back on the Tesseract binary's lines: it drops
    # underscore runs, found instead as thin strokes on a line's baseline (pipeline/parsing/blanks.py).
    # benchmarks/ocr_accuracy.py --pages 16 --langs en (contract pages): 99.64% on vs 99.38% off; --pages 24
    # --interleave (12 contracts, 12 opinions): 96.92% vs 96.87%, measured before vertical lines were
    # dropped (tesseract._vertical: pleading-paper line numbers), which took it to 98.25% with blanks on.
    ocr_blanks: bool = True
    # RapidOCR's 0°/180° classifier on each detected line. Off: scans are read upright, as by Tesseract;
    # on, it turned an upright line of 《》 and “” marks over and lost its Han characters. --pages 6: zh
    # 99.59% off vs 98.82% on; en 99.27% vs 93.94% (measured before this option).
    ocr_rapid_line_angle: bool = False
    ocr_max_pages: int | None = 100  # OCR at most this many pages per document (None = all); others warn
    # A page larger than this many pixels at ocr_dpi is OCR'd at the dpi that fits: a 60-inch blank page
    # at 300 dpi rendered 324 Mpx (3.9 GB); 16 Mpx keeps A4 and Letter at 300 dpi and A3 at 287 dpi.
    ocr_max_pixels: int = 16_000_000
    # Wall time to read one document (checked between pages); over it, the document is an error row.
    max_doc_seconds: float | None = 300.0
    # Bytes one input may hold once read (text, XML) or decompressed (.gz): a 1 MB gzip bomb inflates to
    # 2.1 GB. A JSONL corpus is streamed, so there it bounds time rather than memory; read by windows of
    # lines (`ldx run`), a plain one's windows are each bounded by it, not the whole file.
    max_decompressed_bytes: int = 512 * 2**20
    max_line_bytes: int = 64 * 2**20  # one JSONL record (the longest real judgment is about 1.2 MB)
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
