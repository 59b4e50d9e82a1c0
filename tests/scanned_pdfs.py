"""Scans with known text: a text PDF's page rasterised into an image-only PDF (its text layer is the
ground truth), the OCR path's text of such a page, and character accuracy (1 - CER) between the two,
over all of the page's text or over its body (what the parser keeps once page furniture is gone, its
furniture pass reading the same few pages on both sides).
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
# Pages the body figure's furniture pass reads around a sampled page: repetition over three pages shows
# running heads and Bates lines (on two of them) as it does over a whole document.
WINDOW = 3


def scanned(page: pymupdf.Page, dpi: int = 200, into: pymupdf.Document | None = None) -> pymupdf.Document:
    """A PDF holding only a greyscale image of `page` at `dpi`, as a scanner would make it: a new one, or
    `into` with the image as its last page."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    doc = pymupdf.open() if into is None else into
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


def window(doc: pymupdf.Document, pno: int, n: int = WINDOW) -> list[int]:
    """Page `pno` and the pages after it (before it at the document's end): `n` in all, or every page."""
    start = max(0, min(pno, doc.page_count - n))
    return list(range(start, min(doc.page_count, start + n)))


def body(pages: list[list[Line]], sizes: list[tuple[float, float]], k: int) -> list[Line]:
    """Page `k`'s lines that the parser keeps as text when its furniture pass reads `pages`: not
    furniture (running heads and Bates lines repeat across the pages, page numbers, a clerk's stamp,
    a watermark), not a rule."""
    gone = furniture(pages, sizes)[k]
    return [ln for i, ln in enumerate(pages[k]) if i not in gone and not is_rule(ln.text)]


def body_truth(doc: pymupdf.Document, pnos: list[int], k: int) -> str:
    """The body of page `pnos[k]` as a reader sees it, the parser's furniture pass reading the text
    layer of the pages `pnos` (the same pages a scan of them gives the OCR side)."""
    pages = [doc.load_page(p) for p in pnos]
    lines = [page_lines(page) for page in pages]
    kept = body(lines, [(page.rect.width, page.rect.height) for page in pages], k)
    caps = _small_caps_spans(pages[k])
    return page_text([_as_seen(line, caps) for line in kept], pages[k].rect.width)


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


def ocr_text(doc: pymupdf.Document, config: ParseConfig) -> tuple[str, list[str]]:
    """Page 1 of an image-only `doc` through the parser's OCR path as text, and the warnings it gave."""
    pages, sizes, warnings = extract_lines(doc, config, "scan")
    return page_text(pages[0], sizes[0][0]), warnings


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
