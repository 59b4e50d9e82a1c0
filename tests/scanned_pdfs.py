"""Scans with known text: a text PDF's page rasterised into an image-only PDF (its text layer is the
ground truth), the OCR path's text of such a page, and character accuracy (1 - CER) between the two,
over all of the page's text or over its body (what the parser keeps once page furniture is gone).
Shared by the OCR tests and `benchmarks/ocr_accuracy.py`."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pymupdf

from pipeline.config import ParseConfig
from pipeline.parsing.cleanup import furniture
from pipeline.parsing.layout import Line, is_rule
from pipeline.parsing.pdf import extract_lines, page_lines
from pipeline.parsing.reading import reading_order

_CJK = r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]"
_CJK_GAP = re.compile(rf"(?<={_CJK}) | (?={_CJK})")
_SPACE = re.compile(r"\s+")
# fonts of small capitals: Equity Caps (the Fifth Circuit's party names and judges), "...SmallCaps" (not
# "...SC", which also names Simplified Chinese faces such as SourceHanSansSC)
_SMALL_CAPS = re.compile(r"Caps|SmallCap")


def scanned(page: pymupdf.Page, dpi: int = 200) -> pymupdf.Document:
    """A one-page PDF holding only a greyscale image of `page` at `dpi`, as a scanner would make it."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    doc = pymupdf.open()
    out = doc.new_page(width=page.rect.width, height=page.rect.height)
    out.insert_image(out.rect, pixmap=pix)
    return doc


def page_text(lines: list[Line], width: float) -> str:
    """A page's lines in the parser's reading order, whitespace-normalised: one space between lines
    and words, none beside CJK characters (whose spacing carries no meaning)."""
    text = " ".join(ln.text for column in reading_order(lines, width) for ln in column)
    return _CJK_GAP.sub("", _SPACE.sub(" ", text).strip())


def truth(page: pymupdf.Page) -> str:
    """The page's text as a reader sees it: its text layer, with the words set in small capitals in
    capitals. A small-caps font draws capitals for lower-case letters, so the layer's "Vanessa St.
    Pierre" shows as VANESSA ST. PIERRE, which is what an OCR of the page rightly reads."""
    caps = _small_caps_spans(page)
    return page_text([_as_seen(line, caps) for line in page_lines(page)], page.rect.width)


def body_truth(doc: pymupdf.Document, pno: int) -> tuple[str, list[pymupdf.Rect]]:
    """Page `pno`'s body text as a reader sees it (no furniture, no rules), and the boxes of its
    furniture: the lines the parser's furniture pass removes when it reads the whole document's text
    layer (running heads and Bates lines, page numbers, a clerk's stamp; not watermarks, which lie
    across the text). Furniture is told by its repetition across pages, which one scanned page cannot
    show; its boxes mask the scan's OCR lines instead."""
    pages = [page_lines(page) for page in doc]
    gone = furniture(pages, [(page.rect.width, page.rect.height) for page in doc])[pno]
    page = doc.load_page(pno)
    caps = _small_caps_spans(page)
    kept = [
        _as_seen(line, caps) for i, line in enumerate(pages[pno]) if i not in gone and not is_rule(line.text)
    ]
    # a watermark's box spans the text it crosses: it masks nothing
    mask = [
        pymupdf.Rect(ln.x0, ln.y0, ln.x1, ln.y1)
        for i, ln in enumerate(pages[pno])
        if i in gone and ln.horizontal
    ]
    return page_text(kept, page.rect.width), mask


def body(lines: list[Line], size: tuple[float, float], mask: list[pymupdf.Rect]) -> list[Line]:
    """A scanned page's OCR lines that the parser keeps as text: not a rule, not removed by its furniture
    pass over the page, and not centred inside a box of `mask` (the original page's furniture, grown by
    two points)."""
    gone = furniture([lines], [size])[0]
    grown = [box + (-2, -2, 2, 2) for box in mask]
    return [
        ln
        for i, ln in enumerate(lines)
        if i not in gone
        and not is_rule(ln.text)
        and not any(pymupdf.Point((ln.x0 + ln.x1) / 2, (ln.y0 + ln.y1) / 2) in b for b in grown)
    ]


def _small_caps_spans(page: pymupdf.Page) -> list[tuple[pymupdf.Rect, str]]:
    """(box, text) of each span of the page set in a small-caps font."""
    out = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                text = span["text"].strip()
                if text and _SMALL_CAPS.search(span["font"].split("+")[-1]):
                    out.append((pymupdf.Rect(span["bbox"]), text))
    return out


def _as_seen(line: Line, caps: list[tuple[pymupdf.Rect, str]]) -> Line:
    """`line` with the small-caps spans whose centre lies in its box in capitals."""
    box, text = pymupdf.Rect(line.x0, line.y0, line.x1, line.y1), line.text
    for rect, span in caps:
        centre = (rect.tl + rect.br) / 2
        if centre in box and span in text:
            text = text.replace(span, span.upper(), 1)
    return replace(line, text=text) if text != line.text else line


def ocr_lines(doc: pymupdf.Document, config: ParseConfig) -> tuple[list[Line], list[str]]:
    """Page 1 of an image-only `doc` through the parser's OCR path: its lines, and the warnings it gave."""
    pages, _, warnings = extract_lines(doc, config, "scan")
    return pages[0], warnings


def ocr_text(doc: pymupdf.Document, config: ParseConfig) -> tuple[str, list[str]]:
    """Page 1 of an image-only `doc` through the parser's OCR path as text, and the warnings it gave."""
    lines, warnings = ocr_lines(doc, config)
    return page_text(lines, doc.load_page(0).rect.width), warnings


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance over characters, one numpy row per character of the longer string: a row's
    insertions are a running minimum (row[j] = min over k of tmp[k] + j - k)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    row = idx.copy()
    tmp = np.empty_like(row)
    for i, ch in enumerate(a, 1):
        tmp[0] = i
        np.minimum(row[:-1] + (codes != ord(ch)), row[1:] + 1, out=tmp[1:])
        row = np.minimum.accumulate(tmp - idx) + idx
    return int(row[-1])


def accuracy(reference: str, hypothesis: str) -> float:
    """1 - CER: edits needed to turn `hypothesis` into `reference`, per reference character."""
    return 1.0 - edit_distance(reference, hypothesis) / max(len(reference), 1)
