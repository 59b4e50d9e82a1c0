"""Questions about a patent's front page ("When was the patent filed?", "Who is the assignee?", "Who invented
it?", "What is the patent number?"), answered from the field that states it.

A search cannot answer these: a front page's text layer puts "(22) Filed:" and "Jan. 9, 1998" in two blocks,
the grant date before its label, and a cited paper's author beside the assignee. The parser reads the fields
whole (pipeline.parsing.kinds.patent_front); `FrontPages.answer(field, doc_id)` reads them again from the
document's text, once per document, and says which block holds the value, for the citation.
"""

from __future__ import annotations

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
        r"\b(?:granted|issued|patented)\b|\b(?:issue|grant)\s+date\b|\bdate\s+of\s+(?:the\s+)?patent\b",
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


class FrontPages:
    """The front pages of a run's patents, read on the first question about each."""

    def __init__(self, out_dir: str | Path):
        self.out_dir = Path(out_dir)
        self._read: dict[str, tuple[dict[str, FrontField], list[tuple[int, int, int]]]] = {}
        self._con = None  # one DuckDB connection over the run's tables, opened on the first question

    def _front(self, doc_id: str) -> tuple[dict[str, FrontField], list[tuple[int, int, int]]]:
        if doc_id not in self._read:
            con = self._con = self._con or open_duckdb(self.out_dir)
            row = con.execute(
                "SELECT text FROM documents WHERE doc_id = ? " + LATEST.format(key="doc_id"), [doc_id]
            ).fetchone()
            blocks = con.execute(
                "SELECT block_idx, char_start, char_end FROM blocks WHERE doc_id = ? "
                + LATEST.format(key="block_idx")
                + " ORDER BY block_idx",
                [doc_id],
            ).fetchall()
            self._read[doc_id] = (front_page(row[0] or "") if row else {}, blocks)
        return self._read[doc_id]

    def answer(self, field: str, doc_id: str) -> CoverAnswer | None:
        """The field's value in the document's front page and the block it stands in, or None."""
        fields, blocks = self._front(doc_id)
        found = fields.get(field)
        if found is None or (field == "inventors" and not any(found.value)):
            return None
        block = next((b for b, start, end in blocks if start <= found.start < end), None)
        if block is None:  # the value stands between blocks (a page's furniture): the next block
            block = next((b for b, start, _ in blocks if start >= found.start), None)
        return None if block is None else CoverAnswer(shown(found), block)
