"""Plain text and JSONL corpora. A text document keeps its own characters: blocks are spans of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import charset_normalizer

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, DocumentError, EmptyDocument, UnsupportedFormat
from pipeline.parsing.detect import detect_language
from pipeline.parsing.layouts import LayoutError, layout_of
from pipeline.parsing.limits import capped_lines, open_input, read_capped
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


def read_text(path: Path, config: ParseConfig) -> Extracted:
    text, warnings = decode_text(read_capped(path, config.max_decompressed_bytes), str(path))
    extracted = from_text(text, str(path))
    extracted.warnings += warnings
    return extracted


@dataclass
class JsonlRecord:
    doc_id: str
    source: str  # path#id or path:line, so a record can be found again
    extracted: Extracted


@dataclass(frozen=True)
class LineWindow:
    """Lines [start, stop) of a plain JSONL file (0-based), the first of them at byte `offset`: a part of
    a large corpus file that one task reads alone."""

    start: int
    offset: int
    stop: int


def line_windows(path: Path, lines: int) -> list[LineWindow]:
    """A plain (not gzipped) file cut into windows of `lines` lines, each starting at its own offset."""
    starts, line, pos, last = [0], 0, 0, b"\n"
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            i = chunk.find(b"\n")
            while i >= 0:
                line += 1
                if line % lines == 0:
                    starts.append(pos + i + 1)
                i = chunk.find(b"\n", i + 1)
            pos, last = pos + len(chunk), chunk[-1:]
    total = line + (last != b"\n")  # a last line without its newline is a line too
    if len(starts) > 1 and starts[-1] == pos:
        starts.pop()
    return [LineWindow(k * lines, at, min((k + 1) * lines, total)) for k, at in enumerate(starts)]


def iter_jsonl(
    path: Path, config: ParseConfig, errors: list | None = None, window: LineWindow | None = None
) -> Iterator[JsonlRecord]:
    """One record per non-blank line (see `jsonl_record`), of the whole file or of `window`. doc_id
    hashes the raw line bytes, or the id field's value when one is configured (so an edited record keeps
    its id); either way it is 16 hex chars like every doc_id.
    A bad line (or one over parse.max_line_bytes) is raised, or appended to `errors` when the caller
    collects them and goes on."""
    first = window.start + 1 if window else 1
    with open_input(path) as f:
        if window:
            f.seek(window.offset)
        lines = capped_lines(f, str(path), config.max_line_bytes, config.max_decompressed_bytes, first)
        if window:
            lines = islice(lines, window.stop - window.start)
        for line_no, raw in enumerate(lines, start=first):
            try:
                if isinstance(raw, DocumentError):
                    raise raw
                raw = raw.rstrip(b"\r\n")
                if not raw.strip():
                    continue
                record = jsonl_record(raw, f"{path}:{line_no}", config, path)
            except DocumentError as e:
                if errors is None:
                    raise
                errors.append(e)
                continue
            yield record


def jsonl_record(raw: bytes, where: str, config: ParseConfig, path: Path) -> JsonlRecord:
    """One JSON line as a document: its configured text field when it has one, else the parts its
    structured layout (`pipeline.parsing.layouts`) names, typed as that layout says."""
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorruptDocument(where, f"not a JSON line ({e.msg if hasattr(e, 'msg') else e})") from None
    text_field, id_field = config.jsonl_text_field, config.jsonl_id_field
    if isinstance(obj, dict) and id_field and obj.get(id_field) is not None:
        key = str(obj[id_field])
        doc_id, source = doc_id_for_bytes(key.encode("utf-8")), f"{path}#{key}"
    else:
        doc_id, source = doc_id_for_bytes(raw), where
    if isinstance(obj, dict) and isinstance(obj.get(text_field), str):
        title = obj.get("title") if isinstance(obj.get("title"), str) else None
        return JsonlRecord(doc_id, source, from_text(obj[text_field].replace("\r\n", "\n"), source, title))
    layout = layout_of(obj)
    if layout is None:
        raise UnsupportedFormat(where, f"no string field {text_field!r} and not a layout the parser knows")
    try:
        extracted = layout.read(obj)
    except LayoutError as e:
        raise CorruptDocument(where, f"not a valid {layout.name} record: {e}") from None
    if not extracted.text.strip():
        raise EmptyDocument(where, f"{layout.name} record with no text")
    return JsonlRecord(doc_id, source, extracted)
