"""OCR of scans with known text: a real page rasterised at 200 dpi here, read back by each engine
through the parser's OCR path, reaches a floor of character accuracy; the default config sends each
page to its language's engine."""

from __future__ import annotations

import random
import shutil

import pymupdf
import pytest
from scanned_pdfs import accuracy, edit_distance, ocr_text, scanned, truth

from pipeline.config import ParseConfig
from pipeline.parsing.layout import Line
from pipeline.parsing.ocr import script

ZH = ("zh/pdf/杨某海交通肇事案.pdf", 1)
EN = ("en/judgments/us_opinions_pdf/ca1_20-1507_opinion.pdf", 1)
# Floors under what the helpers of benchmarks/ocr_accuracy.py measured on these pages (zh: RapidOCR 99.9%, Tesseract
# 93.3%; en: Tesseract 99.9%, RapidOCR 94.8%, which reorders the filing stamp).
FLOORS = {
    ("zh", "rapidocr"): 0.99,
    ("zh", "tesseract"): 0.90,
    ("en", "tesseract"): 0.99,
    ("en", "rapidocr"): 0.90,
}


def _scan(shared_data, where):
    path, pno = where
    with pymupdf.open(shared_data / path) as doc:
        page = doc.load_page(pno)
        return truth(page), scanned(page, dpi=200)


def _require(engine: str) -> None:
    if engine == "rapidocr":
        pytest.importorskip("rapidocr")
    elif shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed")


@pytest.mark.parametrize("lang, engine", sorted(FLOORS))
def test_ocr_of_a_rasterised_page_reaches_its_floor(shared_data, lang, engine):
    _require(engine)
    ref, scan = _scan(shared_data, ZH if lang == "zh" else EN)
    hyp, warnings = ocr_text(scan, ParseConfig(ocr_engine_zh=engine, ocr_engine_en=engine))
    assert not warnings
    assert len(ref) > 500 and accuracy(ref, hyp) >= FLOORS[lang, engine], hyp[:300]


def test_default_config_reads_an_english_scan_with_the_english_engine(shared_data):
    _require("rapidocr")
    _require("tesseract")
    config = ParseConfig()
    assert (config.ocr_engine_zh, config.ocr_engine_en) == ("rapidocr", "tesseract")
    ref, scan = _scan(shared_data, EN)
    hyp, _ = ocr_text(scan, config)  # expected zh first (chi_sim+eng), read again as English
    assert accuracy(ref, hyp) >= FLOORS["en", "tesseract"]


def test_script_of_ocr_lines():
    def lines(*texts):
        return [Line(t, 0, 0, 100, 10, 10) for t in texts]

    assert script(lines("本院认为，被告人杨某海", "No. 21-50498")) == "zh"
    assert script(lines("The court held that", "《民法典》")) == "en"


def test_edit_distance_matches_the_textbook_recurrence():
    def slow(a, b):
        row = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            prev, row[0] = row[0], i
            for j, cb in enumerate(b, 1):
                prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
        return row[-1]

    rng = random.Random(3)
    for _ in range(200):
        a = "".join(rng.choice("ab驾驶 ") for _ in range(rng.randrange(12)))
        b = "".join(rng.choice("ab驾驶 ") for _ in range(rng.randrange(12)))
        assert edit_distance(a, b) == slow(a, b), (a, b)
    assert accuracy("交通肇事罪", "交通秘事罪") == pytest.approx(0.8)
