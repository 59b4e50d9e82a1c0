"""The structured JSONL layouts of the shared corpora, read into typed spans.

A record without the configured text field may still be a document: its layout says what each part is
(a judgment's cover lines and numbered paragraphs, a patent's title, abstract, description sections and
claims, a judgment whose sentences carry their rhetorical role). Such a record is typed by what its
layout states, and the kind rules type only what it leaves open (a judgment's body paragraphs). This
module is the one place that knows these layouts: the parser's JSONL reader (`pipeline.parsing.text`)
and the language-model corpora (`txl.corpora`) both read them through it.

A record is in a layout when it has that layout's key; a record in a layout that breaks it raises
`LayoutError` with the reason, which the JSONL reader reports with the file and line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.parsing.kinds.patent import parse_yyyymmdd, section_for_heading
from pipeline.parsing.legaldocml import read_cover
from pipeline.parsing.spans import Extracted, TextBuilder
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta


class LayoutError(ValueError):
    """A record of a recognised layout that breaks it; the message is the reason."""


@dataclass(frozen=True)
class Layout:
    name: str  # as an error names it
    key: str  # the top-level field that puts a record in this layout
    read: Callable[[dict], Extracted]


def _list(record: dict, key: str, required: bool = True) -> list:
    value = record.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise LayoutError(f"{key!r} is not a list")
    return value


def _text(item, where: str, key: str = "text") -> str:
    value = item.get(key) if isinstance(item, dict) else None
    if not isinstance(value, str):
        raise LayoutError(f"{where} has no string {key!r}")
    return value


def _string(record: dict, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value.strip() else None


# ---- England & Wales Court of Appeal judgments (uk_ewca_2020.jsonl) --------------------------------


def read_ewca(record: dict) -> Extracted:
    """`header_lines` (the cover page as printed) and numbered `paragraphs` (`num`, `text`). The cover is
    read as the LegalDocML cover is (judges, parties and counsel typed HEADER/PARTIES); the paragraphs
    keep their numbers and are left to the English-judgment rules to type."""
    lines = _list(record, "header_lines", required=False)
    if not all(isinstance(line, str) for line in lines):
        raise LayoutError("'header_lines' holds a value that is not a string")
    paragraphs = _list(record, "paragraphs")
    meta = DocMeta(doc_type="judgment")
    meta.citation = _string(record, "cite")
    meta.date = _iso_date(record.get("date"))
    b = TextBuilder("\n")
    read_cover([(line, "") for line in lines], meta, b)
    for i, p in enumerate(paragraphs):
        text = _text(p, f"paragraphs[{i}]")
        num = p.get("num")
        b.add(f"{num} {text}" if isinstance(num, str) and num.strip() else text)
    return Extracted(
        text=b.text(),
        spans=b.spans,
        title=_string(record, "name"),
        meta=meta,
        kind=DocKind.EN_JUDGMENT,
        language="en",
    )


def _iso_date(value) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


# ---- USPTO grants as PatentsView parses them (us_patents_parsed.jsonl) ------------------------------

# The sections PatentsView labelled (from the heading patterns), as block types.
_SECTION_LABELS = {
    "preamble": T.DESCRIPTION,
    "detailed_description": T.DESCRIPTION,
    "drawings_description": T.DRAWINGS,
    "background": T.BACKGROUND,
    "summary": T.SUMMARY,
    "cross_reference": T.OTHER,
    "government_interest": T.OTHER,
}
_LEADING_NUMBER = re.compile(r"^\s*\d{1,3}\s*[.)]")


def read_grant(record: dict) -> Extracted:
    """In printed order: title (HEADER), abstract (ABSTRACT), each description section's heading and
    paragraphs typed by the section's label, then one CLAIM per claim, numbered as printed."""
    claims = _list(record, "claims")
    sections = _list(record, "description_sections", required=False)
    b = TextBuilder("\n")
    title = _string(record, "title")
    if title:
        b.add(title, T.HEADER)
    if isinstance(record.get("abstract"), str):
        b.add(record["abstract"], T.ABSTRACT)
    for i, section in enumerate(sections):
        paragraphs = section.get("paragraphs") if isinstance(section, dict) else None
        if not isinstance(paragraphs, list) or not all(isinstance(p, str) for p in paragraphs):
            raise LayoutError(f"description_sections[{i}] has no list of string 'paragraphs'")
        heading = section.get("heading") if isinstance(section.get("heading"), str) else ""
        kind = _SECTION_LABELS.get(section.get("label")) or section_for_heading(heading) or T.DESCRIPTION
        kind = T.DESCRIPTION if kind is T.CLAIM else kind
        for text in (heading, *paragraphs):
            b.add(text, kind)
    for i, claim in enumerate(claims, start=1):
        text = _text(claim, f"claims[{i - 1}]").strip()
        number = re.sub(r"\D", "", str(claim.get("num") or "")) or str(i)
        b.add(text if _LEADING_NUMBER.match(text) else f"{int(number)}. {text}", T.CLAIM)
    meta = DocMeta(doc_type="patent grant")
    meta.patent_number = _string(record, "doc_number")
    meta.date = parse_yyyymmdd(_string(record, "date"))
    meta.filing_date = parse_yyyymmdd(_string(record, "application_date"))
    classes = [record.get("uspc_main"), *_list(record, "ipcr", False), *_list(record, "cpc", False)]
    meta.classes = list(dict.fromkeys(c.strip() for c in classes if isinstance(c, str) and c.strip()))
    return Extracted(text=b.text(), spans=b.spans, title=title, meta=meta, kind=DocKind.PATENT, language="en")


def grant_text(record: dict) -> str:
    """The same grant laid out as its printed text (title, ABSTRACT, description under its headings,
    "What is claimed is:" and the claims), for tests that type a patent from its text alone."""
    parts = [record["title"], "ABSTRACT", record.get("abstract") or ""]
    for section in record.get("description_sections") or []:
        parts += [section.get("heading") or "", *section.get("paragraphs", [])]
    parts += ["What is claimed is:", *(c["text"] for c in record["claims"])]
    return "\n\n".join(p for p in parts if p)


# ---- Indian Supreme Court judgments with rhetorical roles (india_sc_roles.jsonl) ---------------------

# DESIGN.md: Facts → FACTS; Argument → CLAIMS or DEFENSE; Statute, Precedent, Ratio → OPINION;
# Ruling by Lower Court → PROCEDURE; Ruling by Present Court → VERDICT.
INDIA_ROLES: dict[str, set[T]] = {
    "Facts": {T.FACTS},
    "Argument": {T.CLAIMS, T.DEFENSE},
    "Statute": {T.OPINION},
    "Precedent": {T.OPINION},
    "Ratio of the decision": {T.OPINION},
    "Ruling by Lower Court": {T.PROCEDURE},
    "Ruling by Present Court": {T.VERDICT},
}
# The one type a role is given where a single one is needed (an argument's side is not labelled).
INDIA_TYPE = {label: sorted(types)[0] for label, types in INDIA_ROLES.items()}
INDIA_TYPE["Argument"] = T.CLAIMS


def read_india(record: dict) -> Extracted:
    """`sentences` (`text`, `label`), one block each, typed by its hand-labelled role."""
    b = TextBuilder("\n")
    for i, s in enumerate(_list(record, "sentences")):
        text = _text(s, f"sentences[{i}]")
        label = s.get("label")
        if label not in INDIA_TYPE:
            raise LayoutError(f"sentences[{i}] has an unknown role {label!r}")
        b.add(text, INDIA_TYPE[label])
    return Extracted(
        text=b.text(),
        spans=b.spans,
        meta=DocMeta(doc_type="judgment"),
        kind=DocKind.EN_JUDGMENT,
        language="en",
    )


LAYOUTS = (
    Layout("EWCA judgment (header_lines, paragraphs)", "paragraphs", read_ewca),
    Layout("patent grant (title, abstract, claims, description_sections)", "claims", read_grant),
    Layout("rhetorical-role judgment (sentences)", "sentences", read_india),
)


def layout_of(record) -> Layout | None:
    """The layout a JSON record is in, or None."""
    if not isinstance(record, dict):
        return None
    return next((layout for layout in LAYOUTS if layout.key in record), None)
