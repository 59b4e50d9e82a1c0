"""Plain text and JSONL corpora. A text document keeps its own characters: blocks are spans of it."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer

from pipeline.errors import CorruptDocument, EmptyDocument, UnsupportedFormat
from pipeline.parsing.detect import detect_language
from pipeline.parsing.spans import Extracted, paragraph_spans
from pipeline.records import doc_id_for_bytes

# The encodings a text that is not UTF-8 is weighed against: Chinese court sites write GB18030, and
# Western word processors Windows-1252. GB18030 decodes almost any byte string, so it must be chosen
# on the evidence, never as the fallback.
LEGACY_ENCODINGS = ["gb18030", "cp1252"]
WEAK_GUESS = 0.2  # charset-normalizer's "chaos" (share of odd characters) above which the guess is doubtful


def decode_text(data: bytes, source: str) -> tuple[str, list[str]]:
    """The text and any warning about it: UTF-8 (with or without BOM), else GB18030 or Windows-1252
    as the bytes say, else refused. A NUL anywhere means the file is not text."""
    if b"\x00" in data:
        raise UnsupportedFormat(source, "binary content (NUL bytes) in a text file")
    warnings: list[str] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        guess = charset_normalizer.from_bytes(data, cp_isolation=LEGACY_ENCODINGS).best()
        if guess is None:
            raise UnsupportedFormat(source, "text is neither UTF-8, GB18030 nor Windows-1252") from None
        text = str(guess)
        warnings.append(f"not UTF-8; decoded as {guess.encoding}")
        if guess.chaos > WEAK_GUESS:
            warnings.append(f"the {guess.encoding} guess is weak ({guess.chaos:.0%} odd characters)")
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


def decode(data: bytes, source: str) -> str:
    return decode_text(data, source)[0]


def from_text(text: str, source: str, title: str | None = None) -> Extracted:
    if not text.strip():
        raise EmptyDocument(source, "no text")
    language = detect_language(text)
    return Extracted(text=text, spans=paragraph_spans(text, language), title=title, language=language)


def read_text(path: Path) -> Extracted:
    text, warnings = decode_text(path.read_bytes(), str(path))
    extracted = from_text(text, str(path))
    extracted.warnings += warnings
    return extracted


@dataclass
class JsonlRecord:
    doc_id: str
    source: str  # path#id or path:line, so a record can be found again
    extracted: Extracted


def _open_lines(path: Path):
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")


def iter_jsonl(
    path: Path, text_field: str, id_field: str | None, errors: list | None = None
) -> Iterator[JsonlRecord]:
    """One record per non-blank line. doc_id hashes the raw line bytes, or the id field's value when one
    is configured (so an edited record keeps its id); either way it is 16 hex chars like every doc_id.
    A bad line is raised, or appended to `errors` when the caller collects them and goes on."""
    for line_no, raw in _lines(path, errors):
        raw = raw.rstrip(b"\r\n")
        if not raw.strip():
            continue
        where = f"{path}:{line_no}"
        try:
            record = _record(raw, where, text_field, id_field, path)
        except (CorruptDocument, EmptyDocument, UnsupportedFormat) as e:
            if errors is None:
                raise
            errors.append(e)
            continue
        yield record


def _lines(path: Path, errors: list | None) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each line; damaged gzip data ends the file with one error for it, and
    the records before the damage stay."""
    line_no = 0
    try:
        with _open_lines(path) as f:
            for line_no, raw in enumerate(f, start=1):
                yield line_no, raw
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        reason = "truncated gzip data" if isinstance(e, EOFError) else f"damaged gzip data ({e})"
        error = CorruptDocument(str(path), f"{reason} after line {line_no}")
        if errors is None:
            raise error from None
        errors.append(error)


def _record(raw: bytes, where: str, text_field: str, id_field: str | None, path: Path) -> JsonlRecord:
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorruptDocument(where, f"not a JSON line ({e.msg if hasattr(e, 'msg') else e})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get(text_field), str):
        raise UnsupportedFormat(where, f"no string field {text_field!r}")
    text = obj[text_field].replace("\r\n", "\n")
    title = obj.get("title") if isinstance(obj.get("title"), str) else None
    if id_field and obj.get(id_field) is not None:
        key = str(obj[id_field])
        doc_id, source = doc_id_for_bytes(key.encode("utf-8")), f"{path}#{key}"
    else:
        doc_id, source = doc_id_for_bytes(raw), where
    return JsonlRecord(doc_id, source, from_text(text, source, title))
