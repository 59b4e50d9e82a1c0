"""pipeline: documents in — parsing into typed blocks, tokenization, segments. The core records live here.

`parse` and `segment` are the Python API of DESIGN.md; heavy modules load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pipeline.config import ParseConfig, SegmentConfig
    from pipeline.records import Document, Segment


def parse(path, config: ParseConfig | None = None) -> Document:
    """One document from a file (PDF, text, XML, .doc); the same code as `ldx parse`."""
    # lazy, a start-up cost: pipeline.parsing adds ~0.3 s to `import pipeline` (pydantic, pyarrow; measured)
    from pipeline.parsing import parse_file

    return parse_file(path, config)


def load_documents(path, config: ParseConfig | None = None) -> Iterator[Document]:
    """Every document in a file: one for most formats, one per line of a JSONL corpus."""
    # lazy, a start-up cost: as in `parse` (~0.3 s, measured)
    from pipeline.parsing import iter_documents

    return iter_documents(path, config)


def segment(document: Document, config: SegmentConfig | None = None) -> list[Segment]:
    """Block-respecting segments of a parsed document, with the shipped tokenizer by default."""
    # (and its import chain reaches pipeline.store, which reads pipeline.__version__ at import)
    # lazy, a start-up cost: pipeline.segmenter adds ~0.3 s to `import pipeline` (pyarrow; measured)
    from pipeline.segmenter import segment_document

    return segment_document(document, config)
