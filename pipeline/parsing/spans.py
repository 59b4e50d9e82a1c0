"""What a format reader hands to the kind rules: the document text and its paragraph spans.

Readers know layout (pages, boxes, OCR) and sometimes the block type (a claim in patent XML); the kind
rules know the genre. Both speak in character spans over one text, so a block's provenance survives
splitting and typing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pipeline.records import BlockType, DocKind, DocMeta

BBox = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class PagePart:
    """Where one page's share of a span starts in the text, and its box on that page."""

    start: int
    page: int
    bbox: BBox


@dataclass
class Span:
    start: int
    end: int
    type: BlockType | None = None  # preset by structured readers, otherwise set by the kind rules
    page: int | None = None
    bbox: BBox | None = None
    ocr: bool = False
    # one per page a paragraph covers (PDF only); `page`/`bbox` are the first one's
    parts: tuple[PagePart, ...] = ()

    def cut(self, start: int, end: int) -> Span:
        """A piece of this span that keeps its provenance: the pages (and boxes) its characters lie on."""
        if len(self.parts) < 2:
            return replace(self, start=start, end=end)
        parts = tuple(p for i, p in enumerate(self.parts) if p.start < end and _part_end(self, i) > start)
        parts = parts or self.parts[:1]
        return replace(self, start=start, end=end, page=parts[0].page, bbox=parts[0].bbox, parts=parts)

    def joined(self, other: Span) -> Span:
        """This span run on to the end of `other` (a claim or paragraph layout cut in two); boxes on one page
        are united."""
        parts = list(self.parts)
        for p in other.parts:
            if parts and parts[-1].page == p.page:
                a, b = parts[-1].bbox, p.bbox
                box = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                parts[-1] = PagePart(parts[-1].start, p.page, box)
            else:
                parts.append(p)
        first = parts[0] if parts else None
        return replace(
            self,
            end=other.end,
            page=first.page if first else self.page,
            bbox=first.bbox if first else self.bbox,
            ocr=self.ocr or other.ocr,
            parts=tuple(parts),
        )


def _part_end(span: Span, i: int) -> int:
    return span.parts[i + 1].start if i + 1 < len(span.parts) else span.end


@dataclass
class Extracted:
    text: str
    spans: list[Span]
    n_pages: int | None = None
    title: str | None = None
    meta: DocMeta | None = None  # what the format states outright (XML header fields)
    kind: DocKind | None = None  # a format that implies its kind (patent XML, LegalDocML)
    language: str | None = None
    warnings: list[str] = field(default_factory=list)


class TextBuilder:
    """Concatenates pieces into one text, remembering each piece's span."""

    def __init__(self, sep: str = "\n"):
        self.sep = sep
        self.parts: list[str] = []
        self.spans: list[Span] = []
        self.pos = 0

    def add(self, text: str, type: BlockType | None = None, **where) -> Span | None:
        text = text.strip()
        if not text:
            return None
        if self.parts:
            self.parts.append(self.sep)
            self.pos += len(self.sep)
        span = Span(self.pos, self.pos + len(text), type, **where)
        self.parts.append(text)
        self.pos += len(text)
        self.spans.append(span)
        return span

    def text(self) -> str:
        return "".join(self.parts)


_LINE = re.compile(r"[^\n]+")
_WS_RUN = re.compile(r"\S+")


def paragraph_spans(text: str, language: str) -> list[Span]:
    """Paragraphs of a plain text: its lines. A Chinese text with no line breaks at all (some corpora
    flatten documents, joining paragraphs with a space) is split at its whitespace runs instead."""
    pattern = _WS_RUN if language == "zh" and "\n" not in text else _LINE
    return [Span(m.start(), m.end()) for m in pattern.finditer(text)]


def trimmed(text: str, spans: list[Span]) -> list[Span]:
    """Spans without leading/trailing whitespace; empty ones dropped."""
    out = []
    for s in spans:
        piece = text[s.start : s.end]
        left = len(piece) - len(piece.lstrip())
        right = len(piece.rstrip())
        if right > left:
            out.append(s if left == 0 and right == len(piece) else s.cut(s.start + left, s.start + right))
    return out


def split_spans(text: str, spans: list[Span], cuts: re.Pattern) -> list[Span]:
    """Split spans at every `cuts` match end that falls strictly inside one (one pass over the text)."""
    points = sorted({m.end() for m in cuts.finditer(text)})
    if not points:
        return spans
    out: list[Span] = []
    i = 0
    for s in spans:
        while i < len(points) and points[i] <= s.start:
            i += 1
        prev = s.start
        j = i
        while j < len(points) and points[j] < s.end:
            out.append(s.cut(prev, points[j]))
            prev = points[j]
            j += 1
        out.append(s.cut(prev, s.end) if prev != s.start else s)
    return out
