"""Where a patent's description supports each element of its independent claims.

    claim_elements(text) -> list[tuple[int, int]]
    SupportIndex(doc, segments, dense=True).support(element, k) -> list[Segment]
    claim_support(doc, segments, k=3, dense=True) -> list[Prediction]

An independent claim is a preamble and the elements after "comprising" / "including" / "consisting of",
separated by semicolons ("a housing; a motor within the housing; and a controller…"). Each element is
looked up among the patent's own description segments (summary, detailed description, drawings,
background, field: never the claims or the abstract, which restate them) by the retrieval layer's
HybridIndex: BM25 over the segments' terms fused (reciprocal rank) with the packaged MiniLM sentence
model, so a passage that says the same thing in other words (a claim's "fastening means" is the
description's "the screws 14") can be found pages away from any shared wording. `dense=False` is the
BM25-only baseline (benchmarks/claim_support.py compares them).

Each row cites its passages by segment, document offsets, and the page and bbox of the block holding
them (None for inputs without pages).
"""

from __future__ import annotations

import re

from pipeline.parsing.kinds.patent import claim_number, claim_references
from pipeline.records import BlockType, Document, Evidence, Prediction, Segment
from retrieval.hybrid import HybridIndex, MatrixArm, Passage
from retrieval.sentence import embed
from retrieval.text import terms

SUPPORT_TYPES = frozenset(
    {
        BlockType.DESCRIPTION,
        BlockType.SUMMARY,
        BlockType.DRAWINGS,
        BlockType.BACKGROUND,
        BlockType.FIELD,
        BlockType.DEFINITIONS,
        BlockType.OTHER,
    }
)
HYBRID_ID = "support-bm25-minilm-rrf-v1"
BM25_ID = "support-bm25-v1"
# where the elements begin: after the transition of the preamble ("A device comprising:"); "having" only
# where no other transition is used, since a preamble often has one ("a trailer having a landing gear")
_TRANSITIONS = (
    re.compile(r"\b(?:comprising|comprises|including|includes|consisting of|consists of)\b\s*:?", re.I),
    re.compile(r"\bhaving\b\s*:?", re.I),
)
_SEPARATOR = re.compile(r";|:\s*(?=\n|[a-z])|\n")
_LEADING = re.compile(r"^[\s,]*(?:and\s+|or\s+|further\s+|wherein\s+)*", re.I)
MIN_TERMS = 3  # an element shorter than this ("a base") is a name, not something to look up


def claim_elements(text: str) -> list[tuple[int, int]]:
    """(start, end) in `text` of each element of a claim: the parts after its transition word, split at
    semicolons and line breaks; elements with fewer than MIN_TERMS terms are dropped."""
    m = next((t.search(text) for t in _TRANSITIONS if t.search(text)), None)
    if m is None:
        return []
    out, start = [], m.end()
    for cut in [*(s.start() for s in _SEPARATOR.finditer(text, m.end())), len(text)]:
        piece = text[start:cut]
        lead = _LEADING.match(piece).end()
        s, e = start + lead, start + len(piece.rstrip(" .,\n"))
        if e > s and len(terms(text[s:e])) >= MIN_TERMS:
            out.append((s, e))
        start = cut + 1
    return out


class SupportIndex:
    """The retrieval layer over one patent's description segments."""

    def __init__(self, doc: Document, segments: list[Segment], dense: bool = True):
        self.doc = doc
        self.segments = [s for s in segments if s.type in SUPPORT_TYPES and s.text.strip()]
        passages = [Passage(s.segment_id, s.doc_id, s.text, str(s.type)) for s in self.segments]
        self.index = HybridIndex(passages)
        self.by_id = {s.segment_id: s for s in self.segments}
        if dense and passages:
            vectors = embed([p.text for p in passages])
            self.index.add_dense("minilm", MatrixArm(vectors, lambda q: embed([q])[0], len(passages)))

    def support(self, element: str, k: int = 3) -> list[tuple[Segment, float]]:
        """The `k` segments that best support `element`, best first, with their fused scores."""
        if not self.segments:
            return []
        # English text: every arm counts equally (the language-aware default weights)
        hits = self.index.search(element, k=k)
        return [(self.by_id[h.segment_id], h.score) for h in hits]


def cited(doc: Document, segment: Segment) -> Evidence:
    """A segment as evidence, with the page and bbox of its block."""
    block = next((b for b in doc.blocks if b.block_idx == segment.block_idx), None)
    page = block.page if block is not None else None
    bbox = list(block.bbox) if block is not None and block.bbox is not None else None
    return Evidence(segment.segment_id, segment.char_start, segment.char_end, segment.text, page, bbox)


def independent_claims(doc: Document) -> list[tuple[int, object]]:
    """(claim number, CLAIM block) of every claim that refers back to no other and has elements to look
    up (the "What is claimed is:" line above the claims has none)."""
    claims = [b for b in doc.blocks if b.type == BlockType.CLAIM]
    return [
        (claim_number(b.text) or n, b)
        for n, b in enumerate(claims, 1)
        if not claim_references(b.text) and claim_elements(b.text)
    ]


def claim_support(doc: Document, segments: list[Segment], k: int = 3, dense: bool = True) -> list[Prediction]:
    """One `claim_support` row per element of each independent claim: value = the element's words,
    values = [claim number, element number, supporting segment ids…], evidence = the element, then each
    supporting passage (best first); score = the best passage's fused score."""
    claims = independent_claims(doc)
    if not claims:
        return []
    index = SupportIndex(doc, segments, dense)
    model_id = HYBRID_ID if dense else BM25_ID
    out = []
    for number, block in claims:
        for n, (s, e) in enumerate(claim_elements(block.text), 1):
            element = block.text[s:e]
            found = index.support(element, k)
            if not found:
                continue
            start = block.char_start + s
            here = Evidence(None, start, start + len(element), element, block.page, _box(block))
            out.append(
                Prediction(
                    doc.doc_id,
                    "claim_support",
                    element,
                    float(found[0][1]),
                    model_id,
                    found[0][0].segment_id,
                    [str(number), str(n), *(seg.segment_id for seg, _ in found)],
                    [here, *(cited(doc, seg) for seg, _ in found)],
                )
            )
    return out


def _box(block) -> list[float] | None:
    return list(block.bbox) if block.bbox is not None else None
