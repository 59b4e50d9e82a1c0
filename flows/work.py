"""What one input file produced on its way through the run's stages: the unit the flow's tasks pass
along (flows.tasks), write (its tables) and keep in the signed per-file cache (flows.file_cache)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.errors import DocumentError
from pipeline.parsing.text import LineWindow
from pipeline.records import (
    ErrorRecord,
    block_rows,
    document_rows,
    error_rows,
    prediction_rows,
    segment_rows,
)
from retrieval.stages import DocWork


@dataclass(frozen=True)
class InputFile:
    """An input file, or a window of a JSONL corpus file's lines: what one task reads."""

    path: str
    sha256: str
    size: int  # bytes of the whole file
    window: LineWindow | None = None

    @property
    def key(self) -> str:
        """The part key of everything this file (window) produced: its doc_id when it holds one document."""
        return self.sha256[:16] if self.first else f"{self.sha256[:16]}-{self.window.start}"

    @property
    def first(self) -> bool:
        """Whether this is the whole file or its first window: the one that counts the file."""
        return self.window is None or self.window.start == 0


@dataclass
class FileWork:
    file: InputFile
    docs: list[DocWork] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    cached: bool = False
    settled: bool = True  # False once a failure was not the document's fault: then it is never cached

    def fail(self, source: str, stage: str, exc: BaseException, doc_id: str | None = None) -> None:
        self.errors.append(document_error(source, stage, exc, doc_id))
        self.settled = self.settled and isinstance(exc, DocumentError) and exc.lasting

    def tables(self, run_id: str) -> dict[str, list[dict]]:
        rows: dict[str, list[dict]] = {
            name: [] for name in ("documents", "blocks", "segments", "predictions")
        }
        for w in self.docs:
            rows["documents"] += document_rows(w.document, run_id)
            rows["blocks"] += block_rows(w.document.blocks, run_id)
            rows["segments"] += segment_rows(w.segments, run_id)
            rows["predictions"] += prediction_rows(w.predictions, run_id)
        rows["errors"] = error_rows(self.errors, run_id)
        return rows


def document_error(source: str, stage: str, exc: BaseException, doc_id: str | None = None) -> ErrorRecord:
    if isinstance(exc, DocumentError):
        return ErrorRecord(
            source=exc.source, stage=stage, error_type=type(exc).__name__, reason=exc.reason, doc_id=doc_id
        )
    return ErrorRecord(
        source=source, stage=stage, error_type=type(exc).__name__, reason=str(exc) or repr(exc), doc_id=doc_id
    )
