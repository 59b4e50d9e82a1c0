"""Anything no other kind claims: paragraphs in order, untyped (OTHER), the first short line as title."""

from __future__ import annotations

from pipeline.parsing.spans import Span
from pipeline.records import BlockType, DocKind, DocMeta

KIND = DocKind.GENERIC


def score(text: str, language: str) -> float:
    return 0.0  # the fallback; detection picks it when nothing else scores


def type_spans(text: str, spans: list[Span]) -> list[Span]:
    for s in spans:
        if s.type is None:
            s.type = BlockType.OTHER
    return spans


def extract_meta(text: str, spans: list[Span]) -> tuple[DocMeta, str | None]:
    first = text[spans[0].start : spans[0].end] if spans else ""
    return DocMeta(), (first if 0 < len(first) <= 200 else None)
