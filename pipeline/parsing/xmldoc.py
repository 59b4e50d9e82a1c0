"""XML inputs: patents of every USPTO era and EP, UK LegalDocML judgments and US case-law publishers'
opinions, told apart by the root element. A weekly USPTO bulk file is many XML documents concatenated;
each becomes its own document."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from pipeline.errors import CorruptDocument, EmptyDocument, UnsupportedFormat
from pipeline.parsing.case_xml import is_case, read_case
from pipeline.parsing.legaldocml import read_akn
from pipeline.parsing.limits import read_capped
from pipeline.parsing.patent_xml import SCHEMAS, read_patent
from pipeline.parsing.spans import Extracted

_DECL = re.compile(rb"<\?xml[^>]*\?>")
_STRICT = etree.XMLParser(
    resolve_entities=False, load_dtd=False, no_network=True, huge_tree=True, remove_comments=True
)
_LENIENT = etree.XMLParser(
    resolve_entities=False,
    load_dtd=False,
    no_network=True,
    huge_tree=True,
    remove_comments=True,
    recover=True,
)


def read_bytes(path: Path, limit: int) -> bytes:
    data = read_capped(path, limit)
    if not data.strip():
        raise EmptyDocument(str(path), "no content")
    return data


def pieces(data: bytes) -> list[bytes]:
    """The XML documents in a file: split before every XML declaration after the first."""
    starts = [m.start() for m in _DECL.finditer(data)]
    if len(starts) <= 1:
        return [data]
    bounds = [0 if i == 0 else s for i, s in enumerate(starts)] + [len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if data[a:b].strip()]


def parse_xml(data: bytes, source: str) -> tuple[etree._Element, list[str]]:
    """The root element; damaged XML is read leniently with a warning, or refused when nothing is left."""
    try:
        return etree.fromstring(data, _STRICT), []
    except etree.XMLSyntaxError as e:
        try:
            root = etree.fromstring(data, _LENIENT) if data.strip() else None
        except etree.XMLSyntaxError:  # nothing recoverable, e.g. NUL bytes under an .xml name
            root = None
        if root is None or len(root) == 0:
            raise CorruptDocument(source, f"not well-formed XML ({e.msg})") from None
        return root, [f"malformed XML read leniently ({e.msg}); some content may be missing"]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def extract(data: bytes, source: str) -> Extracted:
    root, warnings = parse_xml(data, source)
    name = _local(root.tag)
    if name in SCHEMAS:
        extracted = read_patent(root, SCHEMAS[name])
    elif name == "akomaNtoso":
        extracted = read_akn(root)
    elif name == "Case" and is_case(root):
        extracted = read_case(root)
    else:
        raise UnsupportedFormat(source, f"XML with root <{name}> is not a format the parser reads")
    if not extracted.spans:
        raise EmptyDocument(source, f"<{name}> document without text")
    extracted.warnings = warnings + extracted.warnings
    return extracted


# Bulk files carry these alongside the patents they belong to; they are not documents of their own.
_ATTACHMENTS = re.compile(
    rb"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!DOCTYPE[^>]*>\s*)?<(?:sequence-cwu|us-sequence-listing)\b"
)


def iter_xml(path: Path, limit: int) -> Iterator[tuple[bytes, str]]:
    """(document bytes, source) for each XML document in the file (at most `limit` bytes once
    decompressed); `extract` reads one."""
    data = read_bytes(path, limit)
    docs = pieces(data)
    for i, piece in enumerate(docs):
        if len(docs) > 1 and _ATTACHMENTS.match(piece):
            continue
        source = str(path) if len(docs) == 1 else f"{path}#{i + 1}"
        yield piece, source
