"""Questions about a patent's front page ("When was the patent filed?", "Who is the assignee?", "Who invented
it?", "What is the patent number?"), answered from the field that states it.

A search cannot answer these: a front page's text layer puts "(22) Filed:" and "Jan. 9, 1998" in two blocks,
the grant date before its label, and a cited paper's author beside the assignee. The parser reads the fields
whole (pipeline.parsing.kinds.patent_front); `FrontPages.answer(field, doc_id)` reads them again from the
document's text, once per document, and says which block holds the value, for the citation. A patent that
arrived as a structured record (USPTO or EP XML, a PatentsView grant) has no front page in its text: its
title, number, dates and parties are the record's own (`documents.title` and `meta`), and where those state
a field the text does not, or state it otherwise, they answer, the block holding the value (else the
document's first) cited.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from pipeline.parsing.kinds.patent_front import FrontField, front_page
from pipeline.store import LATEST, open_duckdb
from retrieval.covers import CoverAnswer
from retrieval.text import joined

# what a question asks of the front page; tried in order, the first match wins
_ASKS = (
    ("filed", r"\bfiled\b|\bfiling\s+date\b|\bapplied\s+for\b|\bapplication\s+date\b"),
    (
        "granted",
        r"\b(?:granted|issued|patented)\b|\b(?:issue|grant)\s+date\b|\bdate\s+of\s+(?:the\s+)?patent\b"
        r"|\b(?:patent|it)\s+issue\b",
    ),
    ("number", r"\bpatent\s+(?:number|no\b)|\bnumber\s+of\s+(?:the|this)\s+patent\b"),
    ("assignee", r"\bassignee\b|\bassigned\s+to\b|\bwho\s+(?:owns|holds|owned)\b|\bowner\b"),
    ("inventors", r"\binvent(?:ed|ors?)\b|\bwho\s+(?:devised|made)\b"),
    ("title", r"\btitle\b|\bwhat\s+is\s+(?:the|this)\s+patent\s+called\b"),
)
_ASKS_RE = [(name, re.compile(p, re.I)) for name, p in _ASKS]
_ABOUT_PATENT = re.compile(r"\bpatent|\binvent|\bassignee\b", re.I)


def asked_field(question: str) -> str | None:
    """The front-page field a question asks for, or None."""
    return next((name for name, p in _ASKS_RE if p.search(question)), None)


def about_patent(question: str) -> bool:
    """The question speaks of a patent (or its inventors, its assignee), not just of something filed."""
    return _ABOUT_PATENT.search(question) is not None


def shown(field: FrontField) -> str:
    """The answer to show: a date or a number as printed (a barcode's "US006285999B1" as "6,285,999"),
    inventors' names joined, a title or an assignee as read."""
    if field.name == "inventors":
        return joined([n for n in field.value if n])
    if field.name == "number" and "," not in field.text:
        return f"{int(field.value):,}"
    return field.text if field.name in ("number", "granted", "filed") else field.value


# what the structured readers call a patent (pipeline.parsing.patent_xml, layouts.read_grant); a PDF's is
# "patent", its metadata read from the same text the front page is
_RECORDS = frozenset({"patent grant", "patent application"})


def stated(title: str | None, meta: dict | None) -> dict[str, object]:
    """The front-page fields a structured record states (its title, number, dates and parties); none for
    a patent read from its text, whose title may be the PDF's own metadata rather than its front page's."""
    meta = meta or {}
    if meta.get("doc_type") not in _RECORDS:
        return {}
    parties = meta.get("parties") or []
    fields = {
        "title": title,
        "number": meta.get("patent_number"),
        "granted": meta.get("date"),
        "filed": meta.get("filing_date"),
        "inventors": [p["name"] for p in parties if p["role"] == "inventor"],
        "assignee": next((p["name"] for p in parties if p["role"] == "assignee"), None),
    }
    return {name: value for name, value in fields.items() if value}


def _agrees(found: FrontField, value: object) -> bool:
    """The text's reading of a field says what the metadata says."""
    if found.name == "number":  # "US 12,345,678 B2" is "12345678"
        return _digits(found.value) == _digits(value)
    if isinstance(value, list):
        return [str(n).casefold() for n in found.value if n] == [n.casefold() for n in value]
    return str(found.value).casefold() == str(value).casefold()


def _digits(number: object) -> str:
    """A patent number's digits, without its kind code ("B2") or leading zeros."""
    return re.sub(r"\D", "", re.sub(r"[A-Z]\d?\s*$", "", str(number).strip())).lstrip("0")


def _shown_stated(name: str, value: object) -> str:
    """A metadata value as answered: a date as YYYY-MM-DD, a number with its thousands, names joined."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if name == "inventors":
        return joined(list(value))
    digits = str(value).lstrip("0")
    return f"{int(digits):,}" if name == "number" and digits.isdigit() else str(value)


class FrontPages:
    """The front pages of a run's patents, read on the first question about each."""

    def __init__(self, out_dir: str | Path):
        self.out_dir = Path(out_dir)
        self._read: dict[str, tuple[dict[str, FrontField], list[tuple[int, int, int]], dict, str]] = {}
        self._con = None  # one DuckDB connection over the run's tables, opened on the first question

    def _front(self, doc_id: str) -> tuple[dict[str, FrontField], list[tuple[int, int, int]], dict, str]:
        if doc_id not in self._read:
            con = self._con = self._con or open_duckdb(self.out_dir)
            row = con.execute(
                "SELECT text, title, meta FROM documents WHERE doc_id = ? " + LATEST.format(key="doc_id"),
                [doc_id],
            ).fetchone()
            blocks = con.execute(
                "SELECT block_idx, char_start, char_end FROM blocks WHERE doc_id = ? "
                + LATEST.format(key="block_idx")
                + " ORDER BY block_idx",
                [doc_id],
            ).fetchall()
            text = (row[0] or "") if row else ""
            self._read[doc_id] = (front_page(text), blocks, stated(*row[1:]) if row else {}, text)
        return self._read[doc_id]

    def answer(self, field: str, doc_id: str) -> CoverAnswer | None:
        """The field's value in the document's front page and the block it stands in, or None; the
        metadata's value where the text states none or another."""
        fields, blocks, meta, text = self._front(doc_id)
        found = fields.get(field)
        if found is not None and field == "inventors" and not any(found.value):
            found = None
        value = meta.get(field)
        if value is not None and (found is None or not _agrees(found, value)):
            shown_value = _shown_stated(field, value)
            at = text.find(str(value)) if isinstance(value, str) else -1
            block = _block_at(blocks, at) if at >= 0 else (blocks[0][0] if blocks else None)
            return None if block is None else CoverAnswer(shown_value, block, str(value) if at >= 0 else None)
        if found is None:
            return None
        block = _block_at(blocks, found.start)
        return None if block is None else CoverAnswer(shown(found), block)


def _block_at(blocks: list[tuple[int, int, int]], at: int) -> int | None:
    """The block holding offset `at`; an offset between blocks (a page's furniture) goes with the next."""
    block = next((b for b, start, end in blocks if start <= at < end), None)
    return block if block is not None else next((b for b, start, _ in blocks if start >= at), None)
