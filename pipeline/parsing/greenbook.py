"""USPTO "Greenbook" (APS) full text, the format of 1976–2001 grants: tagged lines, a record type
(PATN, INVT, ASSG, ABST, BSUM, DETD, DRWD, CLMS …) on a line of its own, fields as `TAG  value` with
indented continuation lines."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.config import ParseConfig
from pipeline.errors import UnsupportedFormat
from pipeline.parsing.kinds.patent import parse_yyyymmdd, section_for_heading
from pipeline.parsing.limits import read_capped
from pipeline.parsing.spans import Extracted, TextBuilder
from pipeline.parsing.text import decode
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

_FIELD = re.compile(r"^([A-Z][A-Z0-9]{2,3})(?:\s{1,2}(.*))?$")
_SECTIONS = {
    "ABST": T.ABSTRACT,
    "BSUM": T.SUMMARY,
    "DETD": T.DESCRIPTION,
    "DRWD": T.DRAWINGS,
    "CLMS": T.CLAIM,
}
_TEXT_FIELDS = {"PAR", "PAL", "PA1", "PA2", "PA3", "PA4", "PA5", "TBL", "EQU", "PAC"}


def is_greenbook(head: str) -> bool:
    return head.lstrip().startswith("PATN")


def records(text: str):
    """(record type, [(field, value)]) in order; continuation lines are joined onto their field."""
    rtype, fields = None, []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if line[:1] == " " and fields:
            tag, value = fields[-1]
            fields[-1] = (tag, f"{value} {line.strip()}")
            continue
        m = _FIELD.match(line.rstrip())
        if not m:
            continue
        tag, value = m.group(1), (m.group(2) or "").strip()
        if not value and len(tag) == 4:
            if rtype is not None:
                yield rtype, fields
            rtype, fields = tag, []
        else:
            fields.append((tag, value))
    if rtype is not None:
        yield rtype, fields


def read_greenbook(path: Path, config: ParseConfig) -> Extracted:
    text = decode(read_capped(path, config.max_decompressed_bytes), str(path))
    if not is_greenbook(text[:200]):
        raise UnsupportedFormat(str(path), "not USPTO Greenbook (APS) text: no PATN record")
    b = TextBuilder("\n")
    meta = DocMeta(doc_type="patent grant")
    title = None
    recs = list(records(text))
    for rtype, fields in recs:
        f = dict(fields)
        if rtype == "PATN":
            wku = f.get("WKU", "")
            meta.patent_number = (
                wku[:-1].lstrip("0") if len(wku) == 9 else wku
            )  # the last digit is a check digit
            meta.date = parse_yyyymmdd(f.get("ISD"))
            meta.filing_date = parse_yyyymmdd(f.get("APD"))
            title = f.get("TTL")
        elif rtype in ("INVT", "ASSG") and f.get("NAM"):
            name = " ".join(reversed([p.strip() for p in f["NAM"].split(";", 1)]))
            meta.parties.append(Party(name=name, role="inventor" if rtype == "INVT" else "assignee"))
        elif rtype == "CLAS":
            meta.classes += [v for k, v in fields if k in ("ICL", "OCL")]
    if title:
        b.add(title, T.HEADER)
    if meta.parties:
        b.add(", ".join(f"{p.name} ({p.role})" for p in meta.parties), T.PARTIES)
    for rtype, fields in recs:
        state = _SECTIONS.get(rtype)
        if state is None:
            continue
        for tag, value in fields:
            if tag == "PAC":  # a heading inside the section
                state = section_for_heading(value) or state
                if state is not T.CLAIM:
                    b.add(value, state)
            elif tag in _TEXT_FIELDS and state is not T.CLAIM:
                b.add(value, state)
        if rtype == "CLMS":
            _claims(fields, b)
    return Extracted(text=b.text(), spans=b.spans, title=title, meta=meta, kind=DocKind.PATENT, language="en")


def _claims(fields: list[tuple[str, str]], b: TextBuilder) -> None:
    """One block per claim: a NUM field opens a claim, its PAR/PA* fields are its text."""
    current: list[str] = []
    for tag, value in fields:
        if tag == "NUM":
            if current:
                b.add(" ".join(current), T.CLAIM)
            current = []
        elif tag in _TEXT_FIELDS:
            current.append(value)
    if current:
        b.add(" ".join(current), T.CLAIM)
