"""PDF through PyMuPDF's `get_text("dict")`: lines with geometry → furniture removed → reading order →
paragraphs. Pages without a text layer go through OCR when enabled (pipeline/parsing/ocr.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pymupdf

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, EmptyDocument, EncryptedDocument, TooManyPages
from pipeline.parsing.cleanup import cuts, furniture
from pipeline.parsing.layout import (
    Line,
    Paragraph,
    Piece,
    clean_line,
    flow,
    footnotes,
    is_rule,
    join_lines,
    paragraphs,
)
from pipeline.parsing.limits import Deadline
from pipeline.parsing.ocr import PageOcr
from pipeline.parsing.reading import drawing_sheet, reading_order, sheet_paragraph, split_at
from pipeline.parsing.spans import Extracted, PagePart, TextBuilder
from pipeline.records import BlockType

# Text only: images in the dict output would cost time and memory for nothing.
_FLAGS = pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
_MIN_TEXT = 8  # characters: fewer means the page has no usable text layer


def open_pdf(path: Path, config: ParseConfig) -> pymupdf.Document:
    source = str(path)
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as e:
        raise CorruptDocument(source, f"cannot open PDF ({_first_line(e)})") from None
    if doc.needs_pass or doc.is_encrypted:
        doc.close()
        raise EncryptedDocument(source, "password-protected PDF")
    if doc.page_count == 0:
        repaired = doc.is_repaired
        doc.close()
        if repaired:  # a cut-off file loses its page tree first
            raise CorruptDocument(source, "truncated or damaged PDF: no pages could be recovered")
        raise EmptyDocument(source, "PDF has no pages")
    if doc.page_count > config.page_limit:
        n = doc.page_count
        doc.close()
        raise TooManyPages(source, f"{n} pages, over the limit of {config.page_limit} (parse.page_limit)")
    return doc


def page_lines(page: pymupdf.Page, textpage=None, ocr: bool = False) -> list[Line]:
    data = page.get_text("dict", flags=_FLAGS, textpage=textpage)
    out: list[Line] = []
    for block in data["blocks"]:
        for line in block.get("lines", ()):
            dx, dy = line["dir"]
            horizontal = abs(dy) < 0.05 and dx > 0
            for spans in _runs(line["spans"]) if horizontal else [line["spans"]]:
                text = clean_line("".join(s["text"] for s in spans))
                if not text:
                    continue
                x0, y0, x1, y1 = line["bbox"] if len(spans) == len(line["spans"]) else _union(spans)
                size = max(s["size"] for s in spans)
                out.append(Line(text, x0, y0, x1, y1, size, horizontal, ocr))
    return out


def ocr_dpi(width: float, height: float, config: ParseConfig) -> int:
    """parse.ocr_dpi, or the lower dpi at which a page of `width` × `height` points renders to at most
    parse.ocr_max_pixels pixels (the rendered page is what OCR holds in memory)."""
    fit = 72 * math.sqrt(config.ocr_max_pixels / max(width * height, 1.0))
    return max(1, min(config.ocr_dpi, math.floor(fit)))


def _runs(spans: list[dict]) -> list[list[dict]]:
    """A line's spans cut where a wide gap parts them: PyMuPDF joins the lines of two columns that share
    a baseline when the gutter is narrow."""
    runs = [[spans[0]]] if spans else []
    for s in spans[1:]:
        prev = runs[-1][-1]
        if s["bbox"][0] - prev["bbox"][2] > 1.5 * max(prev["size"], s["size"], 1.0):
            runs.append([s])
        else:
            runs[-1].append(s)
    return runs


def _union(spans: list[dict]) -> tuple[float, float, float, float]:
    x0s, y0s, x1s, y1s = zip(*(s["bbox"] for s in spans), strict=True)
    return min(x0s), min(y0s), max(x1s), max(y1s)


def _ocr_lines(page: pymupdf.Page, config: ParseConfig, dpi: int) -> list[Line]:
    textpage = page.get_textpage_ocr(language=config.ocr_language, dpi=dpi, full=True)
    return page_lines(page, textpage, ocr=True)


def extract_lines(
    doc: pymupdf.Document, config: ParseConfig, source: str
) -> tuple[list[list[Line]], list[tuple[float, float]], list[str]]:
    """Every page's lines (OCR'd where there is no text layer) and size; warnings for unreadable pages."""
    pages: list[list[Line]] = []
    sizes: list[tuple[float, float]] = []
    warnings: list[str] = []
    ocr_budget = config.ocr_max_pages
    deadline = Deadline(source, config.max_doc_seconds)
    ocr = PageOcr(config, _ocr_lines, source)
    for pno in range(doc.page_count):
        deadline.check(f"at page {pno + 1} of {doc.page_count}")
        try:
            page = doc.load_page(pno)
            sizes.append((page.rect.width, page.rect.height))
            lines = page_lines(page)
        except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as e:
            warnings.append(f"page {pno + 1}: unreadable ({_first_line(e)})")
            pages.append([])
            if len(sizes) == pno:
                sizes.append((612.0, 792.0))  # US Letter stands in for a page that would not load
            continue
        if sum(len(ln.text) for ln in lines) >= _MIN_TEXT:
            ocr.saw(lines)
        elif not config.ocr:
            warnings.append(f"page {pno + 1}: no text layer (OCR is off)")
        elif ocr_budget is not None and ocr_budget <= 0:
            warnings.append(f"page {pno + 1}: no text layer; OCR skipped (parse.ocr_max_pages)")
        else:
            dpi = ocr_dpi(*sizes[-1], config)
            if dpi < config.ocr_dpi:
                warnings.append(f"page {pno + 1}: OCR at {dpi} dpi, a large page (parse.ocr_max_pixels)")
            try:
                lines = ocr.lines(page, dpi)
            except (RuntimeError, pymupdf.mupdf.FzErrorBase) as e:  # no Tesseract or language data; limits
                warnings.append(f"page {pno + 1}: OCR failed ({_first_line(e)})")
            if ocr_budget is not None:
                ocr_budget -= 1
        pages.append(lines)
    return pages, sizes, warnings


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def read_pdf(path: Path, config: ParseConfig) -> Extracted:
    source = str(path)
    doc = open_pdf(path, config)
    with doc:
        pages, sizes, warnings = extract_lines(doc, config, source)
        repaired = doc.is_repaired
    drop = furniture(pages, sizes)
    paras = [
        _page_paragraphs(lines, gone, sizes[pno])
        for pno, (lines, gone) in enumerate(zip(pages, drop, strict=True))
    ]
    notes = footnotes(paras, [h for _, h in sizes])
    builder = TextBuilder("\n")
    for pieces, is_note in flow(paras, notes):
        text, starts = _joined(pieces)
        if is_rule(text):
            continue  # it parted paragraphs (and notes from the body); it says nothing
        kind = BlockType.APPENDIX if is_note else None  # DESIGN: footnotes are APPENDIX
        span = builder.add(text, kind, ocr=any(p.ocr for _, p in pieces))
        if span is not None:
            span.parts = _page_parts(pieces, starts, span.start)
            span.page, span.bbox = span.parts[0].page, span.parts[0].bbox
    if not builder.spans:
        if repaired:
            raise CorruptDocument(source, "damaged or truncated PDF: no readable text")
        raise EmptyDocument(source, "no text on any page" + ("" if config.ocr else " (OCR is off)"))
    if repaired:
        warnings.append("the PDF was damaged and repaired on opening; some text may be missing")
    return Extracted(text=builder.text(), spans=builder.spans, n_pages=len(pages), warnings=warnings)


def _page_paragraphs(lines: list[Line], gone: set[int], size: tuple[float, float]) -> list[Paragraph]:
    kept = [ln for i, ln in enumerate(lines) if i not in gone]
    if drawing_sheet(lines):  # told by all its lines: a sheet's furniture may be most of its text
        return [sheet_paragraph(kept)] if kept else []
    return paragraphs(split_at(reading_order(kept, size[0]), cuts(lines, gone, size[1])))


def _joined(pieces: list[Piece]) -> tuple[str, list[int]]:
    """One paragraph's text from its pieces, and where each piece starts in it."""
    text, starts = "", []
    for _, para in pieces:
        text = join_lines(text, para.text)
        starts.append(len(text) - len(para.text))  # join_lines keeps the second part whole at the end
    return text, starts


def _page_parts(pieces: list[Piece], starts: list[int], offset: int) -> tuple[PagePart, ...]:
    """One box per page (pieces from two columns of a page share a box)."""
    parts: list[PagePart] = []
    for (page, para), start in zip(pieces, starts, strict=True):
        box = para.bbox
        if parts and parts[-1].page == page:
            a = parts[-1].bbox
            box = (min(a[0], box[0]), min(a[1], box[1]), max(a[2], box[2]), max(a[3], box[3]))
            parts[-1] = PagePart(parts[-1].start, page, box)
        else:
            parts.append(PagePart(offset + start, page, box))
    return tuple(PagePart(p.start, p.page, tuple(round(v, 2) for v in p.bbox)) for p in parts)
