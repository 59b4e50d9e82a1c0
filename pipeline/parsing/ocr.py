"""OCR engines for pages without a text layer. Tesseract runs as its own binary on the rendered page
(pipeline/parsing/tesseract.py, where the page segmentation mode can be set) or, with
parse.ocr_tesseract "pymupdf", inside PyMuPDF (its OCR text page, read like any other by
`pdf.page_lines`); RapidOCR (PP-OCR's ONNX models, shipped in the `rapidocr` wheel) reads a rendered
pixmap here and its text lines become `Line`s in page points."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable

import numpy as np
import pymupdf

from pipeline.config import ParseConfig
from pipeline.parsing.layout import Line, clean_line
from pipeline.parsing.tesseract import tesseract_lines

# RapidOCR shrinks any image whose longer side is over this many pixels before it detects text; the
# default 2000 halves a Letter page at 300 dpi (3300 px), and small Han characters then lose strokes.
_MAX_SIDE = 4200
_HAN = re.compile(r"[\u3400-\u9fff]")
_HAN_SHARE = 0.3  # of a page's non-space characters: more is a Chinese page (English pages have ~0)

Tesseract = Callable[[pymupdf.Page, ParseConfig, int], list[Line]]


def script(lines: list[Line]) -> str:
    """The language ("zh" or "en") a page's OCR'd lines are in, by their share of Han characters."""
    text = "".join(ln.text for ln in lines).replace(" ", "")
    return "zh" if text and len(_HAN.findall(text)) >= _HAN_SHARE * len(text) else "en"


class PageOcr:
    """One document's OCR. A page goes to the engine of the language it is expected in (that of the
    document's last page with text, from its text layer (`saw`) or OCR'd; before any, zh where
    parse.ocr_language names chi_sim), and is read again by the other language's engine when its text
    turns out to be in that language and the two engines differ; so only a page that changes language,
    or the first of a document with no text layer, is read twice. (An English opinion whose last pages
    were scanned had its first scanned page read by RapidOCR, 11-15 s, before Tesseract read it.)

    Tesseract with Chinese among its languages reads some marks of an English page as Han characters (a
    caption's column of asterisks as 闪闪兴这): an English page whose Tesseract lines hold any is read
    again with the Latin languages alone, and that reading is kept. Han characters quoted on an
    English page are lost with it; the shared English corpora quote none."""

    def __init__(self, config: ParseConfig, tesseract: Tesseract, source: str):
        self.config = config
        self.tesseract = tesseract  # PyMuPDF's OCR text page read as the text layer (pdf.py)
        self.source = source  # named by the binary's errors
        self.expect = "zh" if "chi" in config.ocr_language else "en"
        latin = latin_languages(config.ocr_language)
        # the config of the Latin-only second reading of an English page; None when there are no Chinese
        # languages to leave out or English pages do not go to Tesseract
        self.latin = None
        if latin != config.ocr_language and config.ocr_engine_en == "tesseract":
            self.latin = config.model_copy(update={"ocr_language": latin})
        self._layer: list[Line] = []  # the last text-layer page since the last OCR'd one

    def saw(self, lines: list[Line]) -> None:
        """A page read from its text layer; its script is found only if a page after it needs OCR."""
        self._layer = lines

    def _engine(self, lang: str) -> str:
        return self.config.ocr_engine_zh if lang == "zh" else self.config.ocr_engine_en

    def _read(self, page: pymupdf.Page, dpi: int, lang: str, config: ParseConfig | None = None) -> list[Line]:
        config = config or self.config
        if self._engine(lang) == "rapidocr":
            return rapid_lines(page, dpi, config.ocr_rapid_line_angle)
        if config.ocr_tesseract == "binary":
            return tesseract_lines(page, config, dpi, self.source)
        return self.tesseract(page, config, dpi)

    def lines(self, page: pymupdf.Page, dpi: int) -> list[Line]:
        if self._layer:
            self.expect, self._layer = script(self._layer), []
        lines = self._read(page, dpi, self.expect)
        if not lines:
            return lines  # a blank page says nothing of the language
        seen = script(lines)
        if seen != self.expect and self._engine(seen) != self._engine(self.expect):
            lines = self._read(page, dpi, seen)
        self.expect = seen
        if seen == "en" and self.latin is not None and any(_HAN.search(ln.text) for ln in lines):
            lines = self._read(page, dpi, "en", self.latin)
        return lines


def latin_languages(languages: str) -> str:
    """Tesseract's languages ("chi_sim+eng") without the Chinese ones ("eng"); "eng" when none is left."""
    kept = [lang for lang in languages.split("+") if not lang.startswith("chi_")]
    return "+".join(kept) or "eng"


@functools.cache
def _rapid():
    """One RapidOCR per process, made on the first page it reads."""
    # Importing RapidOCR (OpenCV, ONNX Runtime) and loading its models took 2.3 s here: deferred as a
    # start-up cost to the first OCR'd page, which parses without OCR never pay.
    from rapidocr import RapidOCR

    engine = RapidOCR(params={"Global.max_side_len": _MAX_SIDE, "Global.log_level": "error"})
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return engine


def rapid_lines(page: pymupdf.Page, dpi: int, line_angle: bool = False) -> list[Line]:
    """The page rendered at `dpi` and read by RapidOCR: one Line per detected text line. `line_angle`:
    each line first goes through RapidOCR's 0°/180° classifier (parse.ocr_rapid_line_angle)."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csRGB, alpha=False)
    image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, 3)
    # A blank page skips text detection; numpy because Pixmap.is_unicolor took 23 s on a Letter page.
    if image.min() == image.max():
        return []
    result = _rapid()(image[:, :, ::-1], use_cls=line_angle)  # RapidOCR takes OpenCV's BGR order
    if result.boxes is None:
        return []
    scale = 72.0 / dpi
    x_off, y_off = page.rect.x0, page.rect.y0
    out: list[Line] = []
    for box, raw in zip(result.boxes, result.txts, strict=True):
        text = clean_line(raw)
        if not text:
            continue
        xs, ys = box[:, 0] * scale + x_off, box[:, 1] * scale + y_off
        (ax, ay), (bx, by) = box[0], box[1]  # top edge, left to right
        horizontal = abs(by - ay) <= 0.05 * max(bx - ax, 1.0)
        x0, y0, x1, y1 = float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())
        # A detected box is a little taller than the glyphs: its height stands in for the font size.
        out.append(Line(text, x0, y0, x1, y1, 0.8 * (y1 - y0), horizontal, True))
    return out
