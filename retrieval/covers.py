"""The covers of a run's judgments, for the questions about them (retrieval.caption_questions in English,
retrieval.zh_cover_questions in Chinese): each judgment's title and what the parser read from its head and
signature (`documents.meta`) on the first question, and one judgment's opening and closing blocks when a
question is asked of it, so a run of thousands of judgments is not read whole for one question.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.store import LATEST, open_duckdb

OPENING = 80  # blocks read from a judgment's start: its cover and first paragraphs
CLOSING = 40  # and from its end: the signature, the date, the clerk
COVER_BLOCKS = frozenset({"HEADER", "PARTIES"})  # the block types an English judgment's cover lines become


@dataclass(frozen=True)
class CoverAnswer:
    """A value read from a document's head (a judgment's cover, a patent's front page) and the block
    stating it."""

    text: str  # the answer as shown: the value as printed, names joined
    block_idx: int  # the block holding (the start of) the value
    anchor: str | None = None  # words of the block the answer stands on, to cite their sentence; else the
    # block's whole first segment is the evidence


@dataclass
class Cover:
    kind: str  # en_judgment or zh_judgment
    title: str
    meta: dict
    blocks: list[tuple[int, str, str]]  # (block_idx, block type, text) of the opening and closing blocks

    def block_of(self, value: str) -> int | None:
        """The first block that holds `value` (or, for a value printed over two lines, its first words),
        case, dashes and spacing aside."""
        words = _fold(value).split()
        for n in range(len(words), min(2, len(words)) - 1, -1):
            probe = "".join(words[:n])
            found = next((idx for idx, _, text in self.blocks if probe in "".join(_fold(text).split())), None)
            if found is not None:
                return found
        return None


def _fold(s: str) -> str:
    return " ".join(s.lower().replace("–", "-").replace("—", "-").split())


class Covers:
    """A run's judgments: titles and meta read once, blocks per judgment on demand."""

    def __init__(self, out_dir: str | Path):
        self.out_dir = Path(out_dir)
        self._con = None
        self._heads: dict[str, tuple[str, str, dict]] | None = None
        self._covers: dict[str, Cover] = {}

    def _query(self, sql: str, params: list | None = None) -> list[tuple]:
        if self._con is None:
            self._con = open_duckdb(self.out_dir)
        return self._con.execute(sql, params or []).fetchall()

    def heads(self) -> dict[str, tuple[str, str, dict]]:
        """doc_id -> (kind, title, meta) of every judgment of the run."""
        if self._heads is None:
            rows = self._query(
                "SELECT doc_id, kind, coalesce(title, ''), to_json(meta) FROM documents "
                "WHERE kind IN ('en_judgment', 'zh_judgment') " + LATEST.format(key="doc_id")
            )
            self._heads = {d: (kind, title, json.loads(meta)) for d, kind, title, meta in rows}
        return self._heads

    def _blocks(self, doc_id: str) -> list[tuple[int, str, str]]:
        """(block_idx, type, text) of every block of `doc_id`, as the latest run wrote it, in order."""
        return self._query(
            "SELECT block_idx, CAST(type AS VARCHAR), text FROM blocks WHERE doc_id = ? "
            + LATEST.format(key="block_idx")
            + " ORDER BY block_idx",
            [doc_id],
        )

    def blocks(self, doc_id: str, kind: str, types: tuple[str, ...]) -> list[tuple[int, str, str]]:
        """The blocks of `types` of `doc_id` when it is a judgment of `kind`, wherever they stand (a long
        judgment's verdict may begin before its last CLOSING blocks), else []."""
        head = self.heads().get(doc_id)
        return [r for r in self._blocks(doc_id) if r[1] in types] if head and head[0] == kind else []

    def cover(self, doc_id: str, kind: str) -> Cover | None:
        """The cover of `doc_id` when it is a judgment of `kind`, else None."""
        head = self.heads().get(doc_id)
        if head is None or head[0] != kind:
            return None
        if doc_id not in self._covers:
            rows = self._blocks(doc_id)
            last = rows[-1][0] if rows else 0
            # an English cover is all at the opening; a Chinese judgment is signed and dated at its end
            closing = kind == "zh_judgment"
            kept = [
                r
                for r in rows
                if r[0] < OPENING or closing and (r[0] > last - CLOSING or r[1] == "SIGNATURE")
            ]
            self._covers[doc_id] = Cover(*head, kept)
        return self._covers[doc_id]
