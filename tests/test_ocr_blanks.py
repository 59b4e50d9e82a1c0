"""Fill-in blanks on Tesseract's lines: a form page written here with known underscore runs, rasterised
at 200 dpi and read back through the parser's OCR path, gets its blanks back as underscore runs of
about the right length in the right places, while an underlined word, a rule between paragraphs and
a table's borders add none; and the stroke finder, the line matcher and the word joiner on their own."""

from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import numpy as np
import pymupdf
import pytest
from scanned_pdfs import scanned

from pipeline.config import ParseConfig
from pipeline.parsing.blanks import Blank, Stroke, line_blanks, strokes
from pipeline.parsing.layout import Line
from pipeline.parsing.pdf import extract_lines
from pipeline.parsing.tesseract import _with_blanks, _Word

X, SIZE = 72.0, 11.0
# Each blank's pattern on its line and the underscores of its runs in the text PDF.
BLANKS = [
    (r"made this (_+) day of (_+), ?20(_+), by", (5, 9, 3)),
    (r"^(_+) \(the", (27,)),
    (r"^Name: (_+) Title: (_+)$", (20, 10)),
]


def _form() -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)

    def text(x: float, y: float, s: str) -> None:
        page.insert_text((x, y), s, fontname="tiro", fontsize=SIZE)

    text(X, 100, "This Agreement is made this _____ day of _________, 20___, by and between")
    text(X, 116, '___________________________ (the "Franchisee"), and the Franchisor named below.')
    text(X, 132, "Name: ____________________   Title: __________")
    text(X, 160, "The term is binding on both parties to this Agreement.")
    under = X + pymupdf.get_text_length("The term is ", fontname="tiro", fontsize=SIZE)
    width = pymupdf.get_text_length("binding", fontname="tiro", fontsize=SIZE)
    page.draw_line((under, 161.5), (under + width, 161.5), width=0.6)  # an underlined word
    text(X, 176, "This paragraph ends here.")
    page.draw_line((X, 179), (540, 179), width=0.8)  # a rule across the page, just under the line
    text(X, 200, "A new paragraph begins after the rule across the page.")
    page.draw_rect(pymupdf.Rect(X, 220, 540, 238), width=0.6)  # a table row of three cells
    for i, cell in enumerate(["Party", "Date signed", "Place"]):
        if i:
            page.draw_line((X + 160 * i, 220), (X + 160 * i, 238), width=0.6)
        text(X + 4 + 160 * i, 233, cell)
    return doc


@pytest.fixture(scope="module")
def form_scan():
    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed")
    with _form() as doc:
        return scanned(doc.load_page(0), dpi=200)


def _ocr(scan: pymupdf.Document, **options) -> list[Line]:
    pages, _, warnings = extract_lines(scan, ParseConfig(ocr_language="eng", **options), "form.pdf")
    assert not warnings
    return pages[0]


def test_blanks_come_back_as_underscore_runs_in_place(form_scan):
    texts = [ln.text for ln in _ocr(form_scan)]
    runs = 0
    for pattern, sizes in BLANKS:
        found = [m for t in texts if (m := re.search(pattern, t))]
        assert len(found) == 1, (pattern, texts)
        got = [len(g) for g in found[0].groups()]
        assert all(abs(g - n) <= max(1, 0.3 * n) for g, n in zip(got, sizes, strict=True)), (got, sizes)
        runs += len(sizes)
    # the underline, the rule and the table's borders add none
    assert sum(len(re.findall("_+", t)) for t in texts) == runs, texts
    assert "The term is binding on both parties to this Agreement." in texts
    assert "This paragraph ends here." in texts
    assert {"Party", "Date signed", "Place"} <= set(texts)


def test_lines_without_blanks_read_as_with_blanks_off(form_scan):
    on, off = _ocr(form_scan), _ocr(form_scan, ocr_blanks=False)
    plain = [ln for ln in on if "_" not in ln.text]
    assert len(plain) == 6 and all(ln in off for ln in plain)
    joined = " ".join(ln.text for ln in off)
    assert "made this day of" in joined and "Name:" in joined and "Name: _" not in joined


def test_stroke_finder_bridges_a_scanned_underscore_run():
    ink = np.zeros((30, 200), dtype=bool)
    for x in range(20, 120, 18):  # an underscore run as a scan shows it: 2 rows, a 3-px gap per glyph
        ink[20:22, x : x + 15] = True
    ink[20, 140:190] = True  # another after a word space
    ink[2:10, 20:150] = True  # a bar, too thick for a blank's line
    ink[25, 150:160] = True  # too short
    found = strokes(ink, min_length=24, max_gap=5, max_thickness=3)
    assert found == [Stroke(20, 125, 20, 22), Stroke(140, 190, 20, 21)]


def test_line_blanks_keep_strokes_on_the_baseline_between_words():
    def word(text, x0, x1, y1=34):
        return SimpleNamespace(text=text, x0=x0, y0=10, x1=x1, y1=y1)

    words = [word("made", 10, 60), word("this", 70, 110), word("day", 200, 240, 40), word("of", 250, 270)]
    words.append(word("end", 400, 440))
    ink = np.zeros((60, 800), dtype=bool)
    ink[36, 10:60] = True  # the underline of "made"
    ink[36:38, 112:185] = True  # a blank touching "this"
    ink[36, 300:380] = True  # a stroke under letters Tesseract did not box
    ink[15:30, 300:380:3] = True
    ink[36, 500:700] = True  # a rule off to the right, no word near it
    ink[20, 275:330] = True  # a dash at mid-height
    # 16 lower-case letters over 190 px: an em of 26.4 px, so 73 px of blank is 5.5 underscores of 13.2
    assert line_blanks(ink, words) == [Blank(112, 36, 185, 38, 6, True, False)]


def test_a_blank_joins_the_words_it_touches():
    words = [
        _Word(t, 90.0, x0, 10, x1, 34) for t, x0, x1 in [("of", 0, 20), ("20", 100, 130), (",", 162, 166)]
    ]
    blanks = [Blank(32, 36, 90, 38, 4, False, False), Blank(132, 36, 160, 38, 3, True, True)]
    joined = _with_blanks(words, blanks)
    assert [(w.text, w.x0, w.y0, w.x1, w.y1) for w in joined] == [
        ("of", 0, 10, 20, 34),
        ("____", 32, 36, 90, 38),
        ("20___,", 100, 10, 166, 34),
    ]
