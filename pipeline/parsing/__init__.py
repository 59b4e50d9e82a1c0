"""Documents in: any supported file into a `Document` of typed blocks with provenance.

A format reader (pdf, text, uspto, ep, legaldocml, worddoc) turns bytes into one text plus paragraph
spans; the kind's rules (kinds/) split and type those spans and read the header metadata; `build`
turns the result into the records of DESIGN.md.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, DocumentError, EmptyDocument, UnreadableFile, UnsupportedFormat
from pipeline.parsing.detect import detect_kind, detect_language
from pipeline.parsing.greenbook import read_greenbook
from pipeline.parsing.kinds import module_for
from pipeline.parsing.spans import Extracted, trimmed
from pipeline.parsing.text import LineWindow, iter_jsonl, line_windows, read_text
from pipeline.parsing.worddoc import read_doc
from pipeline.parsing.xmldoc import extract, iter_xml
from pipeline.process import fault_point
from pipeline.records import Block, BlockType, DocKind, DocMeta, Document, doc_id_for_bytes, doc_id_for_file

__all__ = ["parse_file", "iter_documents", "build", "DocumentError", "LineWindow", "corpus_windows"]

TEXT_SUFFIXES = (".txt", ".text", ".md")
PLAIN_JSONL = (".jsonl", ".ndjson")
JSONL_SUFFIXES = (*PLAIN_JSONL, ".jsonl.gz")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return next((s for s in JSONL_SUFFIXES + (".xml.gz",) if name.endswith(s)), path.suffix.lower())


def _sniff(head: bytes) -> str | None:
    """What the content is, whatever the name says."""
    if b"%PDF-" in head:  # readers accept junk before the header within the first 1 KiB
        return "pdf"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return "ole"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    return None


_EXPECTED = {".pdf": "pdf", ".doc": "ole", ".jsonl.gz": "gzip", ".xml.gz": "gzip"}


def _check(path: Path) -> str:
    """The format to read `path` as, after the checks every input gets (exists, not empty, honest name)."""
    source = str(path)
    if not path.exists():
        raise UnreadableFile(source, "no such file (removed during the run?)")
    if not path.is_file():
        raise UnsupportedFormat(source, "not a file")
    if path.stat().st_size == 0:
        raise EmptyDocument(source, "empty file (0 bytes)")
    with open(path, "rb") as f:
        head = f.read(1024)
    suffix, content = _suffix(path), _sniff(head)
    expected = _EXPECTED.get(suffix)
    if content != expected and (expected or content):
        found = content or "text"
        raise UnsupportedFormat(source, f"extension {suffix} does not match the content ({found})")
    if suffix in TEXT_SUFFIXES and head.lstrip().startswith(b"PATN"):
        return ".greenbook"  # USPTO APS full text is often stored as .txt
    if suffix in _READERS or suffix in JSONL_SUFFIXES:
        return suffix
    raise UnsupportedFormat(source, f"unsupported file type {suffix or '(no extension)'}")


def _read_pdf(path: Path, config: ParseConfig) -> Extracted:
    # lazy, a start-up cost: pymupdf adds ~0.7 s to `import pipeline.parsing` (measured), paid only for PDFs
    from pipeline.parsing.pdf import read_pdf

    return read_pdf(path, config)


_READERS = {
    ".pdf": _read_pdf,
    **dict.fromkeys(TEXT_SUFFIXES, read_text),
    ".greenbook": read_greenbook,
    ".aps": read_greenbook,
    ".doc": read_doc,
    ".xml": None,  # possibly several documents: see _records
    ".xml.gz": None,
}


def corpus_windows(path: Path, lines: int) -> list[LineWindow] | None:
    """A plain JSONL corpus cut into windows of `lines` lines (text.line_windows), which
    `iter_documents` reads apart; None for any other file, read whole: a gzipped corpus (its lines cannot
    be reached without inflating everything before them) and a file the parser refuses at sight (one
    error for it, not one per window)."""
    try:
        kind = _check(path)
    except DocumentError:
        return None
    return line_windows(path, lines) if kind in PLAIN_JSONL else None


def _records(
    path: Path, config: ParseConfig, errors: list | None, window: LineWindow | None
) -> Iterator[tuple[str, str, Extracted]]:
    """(doc_id, source, extracted) for every document in the file (or in the window of its lines)."""
    kind = _check(path)
    if window is not None and kind not in PLAIN_JSONL:
        raise ValueError(f"{path}: only a plain JSONL file is read by windows of lines")
    if kind in JSONL_SUFFIXES:
        for r in iter_jsonl(path, config, errors, window):
            yield r.doc_id, r.source, r.extracted
    elif kind in (".xml", ".xml.gz"):
        for piece, source in iter_xml(path, config.max_decompressed_bytes):
            try:
                extracted = extract(piece, source)
            except DocumentError as e:
                if errors is None:
                    raise
                errors.append(e)
                continue
            yield (
                (doc_id_for_file(path) if source == str(path) else doc_id_for_bytes(piece)),
                source,
                extracted,
            )
    else:
        yield doc_id_for_file(path), str(path), _READERS[kind](path, config)


def build(extracted: Extracted, source: str, doc_id: str, config: ParseConfig) -> Document:
    """Detect language and kind, type the spans by the kind's rules, and emit the records."""
    text = extracted.text
    language = extracted.language or detect_language(text)
    kind = DocKind(config.kind) if config.kind else extracted.kind or detect_kind(text, language)
    rules = module_for(kind)
    spans = trimmed(text, rules.type_spans(text, trimmed(text, extracted.spans)))
    if not spans:
        raise EmptyDocument(source, "no text found")
    meta, title = rules.extract_meta(text, spans)
    if extracted.meta is not None:
        meta = _merge(extracted.meta, meta)
    blocks = [
        Block(
            doc_id=doc_id,
            block_idx=i,
            type=s.type or BlockType.OTHER,
            text=text[s.start : s.end],
            char_start=s.start,
            char_end=s.end,
            page=s.page,
            bbox=s.bbox,
            ocr=s.ocr,
            spans=[(p.page, p.bbox) for p in s.parts],
        )
        for i, s in enumerate(spans)
    ]
    return Document(
        doc_id=doc_id,
        source=source,
        kind=kind,
        language=language,
        text=text,
        title=extracted.title or title,
        n_pages=extracted.n_pages,
        meta=meta,
        warnings=list(extracted.warnings),
        blocks=blocks,
    )


def _merge(stated: DocMeta, found: DocMeta) -> DocMeta:
    """Fields a format states outright win over those the rules found in the text."""
    for name, value in vars(stated).items():
        if value not in (None, []):
            setattr(found, name, value)
    return found


def parse_file(path, config: ParseConfig | None = None) -> Document:
    """One document from a file. A JSONL corpus or a bulk XML file gives its first (see `iter_documents`)."""
    for doc in iter_documents(path, config):
        return doc
    raise EmptyDocument(str(path), "no records")


def iter_documents(
    path, config: ParseConfig | None = None, errors: list | None = None, window: LineWindow | None = None
) -> Iterator[Document]:
    """Every document in a file: one per line of a JSONL corpus (of its `window` of lines, when given),
    one per XML document of a bulk patent file, else the file's one document. With `errors`, a bad
    record is appended there and the rest go on; otherwise it is raised."""
    config = config or ParseConfig()
    records = _records(Path(path), config, errors, window)
    while True:
        try:
            doc_id, source, extracted = next(records)
        except StopIteration:
            return
        except (OSError, EOFError, zlib.error) as e:
            # Reading the input failed (damaged compressed data, a file gone or unreadable): that is
            # this file's error, never a reason to retry its batch.
            raise _input_error(Path(path), e) from None
        try:
            doc = build(extracted, source, doc_id, config)
        except DocumentError as e:
            if errors is None:
                raise
            errors.append(e)
            continue
        fault_point("parse")
        yield doc


def _input_error(path: Path, exc: BaseException) -> DocumentError:
    if isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return CorruptDocument(str(path), f"damaged compressed data ({exc})")
    if isinstance(exc, EOFError):
        return CorruptDocument(str(path), "truncated compressed data")
    return UnreadableFile(str(path), getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
