"""Page images for the review pages, rendered with PyMuPDF from the run's source PDFs, with the boxes the
pages draw over them.

Only the pages a review page shows are rendered (the caller picks them: pages holding a flagged or cited
block), each once: an image is named after its document's id (the sha256 of the PDF's bytes), page and
dpi, so a file already on disk is the same picture and is kept, and a later `ldx review` renders only what
is new. A source is rendered only while its bytes still hash to the document's id: a PDF changed or moved
since the run would put the Parquet boxes on another page. Non-PDF documents have no page image.
"""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from pipeline.records import doc_id_for_file
from pipeline.store import atomic_write_bytes

DPI = 80  # modest: a letter page is 680 x 880 px, ~60-150 KB of PNG
SCALE = DPI / 72  # PDF points to image pixels
MAX_PAGES_PER_DOC = 4  # page images per document page
MAX_IMAGES = 2000  # page images rendered per review (about 200 MB at most)
_SAFE = re.compile(r"[0-9A-Za-z_-]{1,64}")


def safe_name(doc_id: str) -> str:
    """A file name for a document: its id when it is plain (ids are hex digests), else a digest of it, so
    no character read from the Parquet tables reaches a path."""
    if _SAFE.fullmatch(doc_id):
        return doc_id
    return "x" + hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass
class Box:
    """A block's box on a page image, in image pixels."""

    left: int
    top: int
    width: int
    height: int
    block_idx: int
    label: str
    marked: bool  # a flagged or cited block (drawn in the mark colour), else a plain block outline


def box_on_image(bbox, block_idx: int, label: str, marked: bool) -> Box:
    x0, y0, x1, y1 = (float(v) for v in bbox)
    left, top = round(x0 * SCALE), round(y0 * SCALE)
    return Box(
        left, top, max(1, round(x1 * SCALE) - left), max(1, round(y1 * SCALE) - top), block_idx, label, marked
    )


@dataclass
class PageView:
    page: int  # 0-based
    src: str  # the image, relative to the HTML page that shows it
    width: int
    height: int
    boxes: list[Box] = field(default_factory=list)


def _png_size(data: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk follows the 8-byte signature
    return width, height


class PageRenderer:
    """Renders pages into `folder` (at most MAX_IMAGES new and kept images per renderer)."""

    def __init__(self, folder: Path, max_images: int = MAX_IMAGES):
        self.folder = folder
        self.left = max_images
        self._sources: dict[str, Path | None] = {}

    def source_pdf(self, doc_id: str, source: str | None) -> Path | None:
        """The document's PDF when it still holds the bytes the run read; None otherwise."""
        if doc_id not in self._sources:
            path = Path(source) if source else None
            ok = path is not None and path.suffix.lower() == ".pdf" and path.is_file()
            try:
                ok = ok and doc_id_for_file(path) == doc_id
            except OSError:
                ok = False
            self._sources[doc_id] = path if ok else None
        return self._sources[doc_id]

    def render(self, doc_id: str, source: str | None, page: int) -> tuple[Path, int, int] | None:
        """(image file, width, height) of a 0-based page, rendered unless it is on disk already."""
        pdf = self.source_pdf(doc_id, source)
        if pdf is None or self.left <= 0:
            return None
        target = self.folder / f"{safe_name(doc_id)}-p{page + 1}-{DPI}dpi.png"
        if target.is_file():
            with open(target, "rb") as f:
                head = f.read(24)
            if len(head) == 24:
                self.left -= 1
                return (target, *_png_size(head))
        try:
            with pymupdf.open(pdf, filetype="pdf") as doc:
                if not 0 <= page < doc.page_count:
                    return None
                data = doc[page].get_pixmap(matrix=pymupdf.Matrix(SCALE, SCALE), alpha=False).tobytes("png")
        except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase):
            return None  # a damaged page: the review page shows the text without it
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)
        self.left -= 1
        return (target, *_png_size(data))
