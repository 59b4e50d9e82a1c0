"""Pleading paper through Tesseract: a page written here with a left-margin column of line numbers 1-28
and a rule beside it, as US court filings have, rasterised at 200 dpi and read back through the
parser's OCR path, gives its body lines top to bottom with no letters or Han characters made of the
number column; and the vertical-line test on Tesseract's words on its own."""

from __future__ import annotations

import re
import shutil

import pymupdf
import pytest
from scanned_pdfs import page_text, scanned

from pipeline.config import ParseConfig
from pipeline.parsing.pdf import extract_lines
from pipeline.parsing.tesseract import _vertical, _Word

TOP, PITCH, ROWS = 72.0, 24.0, 28  # double-spaced rows, as on pleading paper
SUBJECTS = "apples bridges candles doctors engines forests gardens harbours islands journeys kettles ladders"
# Body rows (1-based) and the subject each names; rows 1-2 and 27-28 hold only their numbers.
BODY = {row: word for row, word in zip(range(3, 27, 2), SUBJECTS.split(), strict=True)}


def _pleading() -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for row in range(1, ROWS + 1):
        y = TOP + row * PITCH
        number = str(row)
        page.insert_text((60 - pymupdf.get_text_length(number, "helv", 11), y), number, fontsize=11)
        if row in BODY:
            line = f"The court then considered the {BODY[row]} named in the motion before it."
            page.insert_text((90, y), line, fontname="tiro", fontsize=12)
    page.draw_line((72, 40), (72, 760), width=0.8)
    page.draw_line((75, 40), (75, 760), width=0.8)
    return doc


@pytest.fixture(scope="module")
def pleading_text() -> str:
    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed")
    with _pleading() as doc:
        scan = scanned(doc.load_page(0), dpi=200)
    # chi_sim+eng, the default language, is where the number column came back with Han characters
    config = ParseConfig(ocr_engine_en="tesseract", ocr_engine_zh="tesseract")
    pages, sizes, warnings = extract_lines(scan, config, "pleading.pdf")
    assert not warnings
    return page_text(pages[0], sizes[0][0])


def test_body_lines_read_top_to_bottom(pleading_text):
    found = [pleading_text.find(word) for word in BODY.values()]
    assert -1 not in found, pleading_text
    assert found == sorted(found), pleading_text


def test_number_column_adds_no_garbage(pleading_text):
    assert not re.search(r"[\u3400-\u9fff]", pleading_text), pleading_text
    lines = [f"The court then considered the {word} named in the motion before it." for word in BODY.values()]
    rest = pleading_text
    for line in lines:
        rest = rest.replace(line, " ")
    # what is left is the margin's numbers, read or not, never the letters Tesseract made of them
    assert re.fullmatch(r"[\d\s]*", rest), rest


def _word(text: str, x0: float, y0: float, x1: float, y1: float) -> _Word:
    return _Word(text, 60.0, x0, y0, x1, y1)


def test_stacked_words_are_a_vertical_line():
    stack = [
        _word("NO", 310, 2885, 345, 2928),
        _word("HN", 310, 2792, 345, 2835),
        _word("KF", 310, 2700, 345, 2745),
    ]
    assert _vertical(stack)
    touching = [_word("wm", 340, 736, 378, 794), _word("人", 346, 793, 369, 820)]  # 1 px of overlap
    assert _vertical(touching)


def test_a_row_of_words_is_not_vertical_even_skewed():
    row = [_word("The", 100, 50, 160, 86), _word("court", 175, 54, 260, 90), _word("then", 275, 58, 340, 94)]
    assert not _vertical(row)
    assert not _vertical([_word("alone", 100, 50, 160, 86)])
