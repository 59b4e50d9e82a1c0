"""An English page through Tesseract with chi_sim+eng (the default languages) comes back without Han
characters: a real Eighth Circuit opinion's first page, whose caption has a column of asterisks that the
Chinese model read as 闪闪兴这, rasterised at 200 dpi and read back through the parser's OCR path."""

from __future__ import annotations

import re
import shutil

import pymupdf
import pytest
from scanned_pdfs import accuracy, ocr_text, scanned, truth

from pipeline.config import ParseConfig
from pipeline.parsing.ocr import latin_languages
from pipeline.paths import SHARED_DATA

OPINION = SHARED_DATA / "en/judgments/us_opinions_pdf/circuit_8thCircuit-071306U.pdf"


@pytest.mark.parametrize(
    ("languages", "latin"), [("chi_sim+eng", "eng"), ("eng+chi_tra+deu", "eng+deu"), ("chi_sim", "eng")]
)
def test_latin_languages_drop_the_chinese_ones(languages, latin):
    assert latin_languages(languages) == latin


def test_an_english_caption_reads_without_han_characters():
    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed")
    if not OPINION.exists():
        pytest.fail(f"{OPINION}: shared data missing")
    with pymupdf.open(OPINION) as doc:
        page = doc.load_page(0)
        reference, scan = truth(page), scanned(page, dpi=200)
    config = ParseConfig(ocr_engine_en="tesseract", ocr_engine_zh="tesseract", ocr_max_pages=None)
    assert "chi_sim" in config.ocr_language
    text, warnings = ocr_text(scan, config)
    assert not warnings
    assert not re.search(r"[\u3400-\u9fff]", text), text
    # 87.2% when the chi_sim+eng reading was kept; what is left is the caption's asterisks and rules
    assert accuracy(reference, text) > 0.91, text
