"""Passages as an Asker holds them, for the tests of the routes that read a judgment's own words
(retrieval.about_questions, retrieval.grounds_questions, retrieval.why_questions,
retrieval.separate_opinions): written paragraphs, one opinion passage per line, or a shared judgment parsed
and segmented."""

from __future__ import annotations

from pathlib import Path

import pipeline
from retrieval.hybrid import Passage

EWCA = "en/judgments/uk_ewca_2020_xml"


def written(text: str) -> list[Passage]:
    return [Passage(f"s{i}", "d", p, "OPINION") for i, p in enumerate(text.split("\n"))]


def ewca(shared_data: Path, number: int) -> list[Passage]:
    """The passages of [2020] EWCA Civ `number` from its LegalDocML file."""
    return parsed(shared_data / EWCA / f"2020-ewca-{number}-civ.xml.gz")


def parsed(path: Path) -> list[Passage]:
    """The passages of a shared document, one per segment, typed as the parser types its blocks."""
    doc = pipeline.parse(path)
    return [Passage(s.segment_id, doc.doc_id, s.text, s.type.value) for s in pipeline.segment(doc)]
