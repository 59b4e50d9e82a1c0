"""OCR of scans with known text: a real page rasterised at 200 dpi here, read back by each engine
through the parser's OCR path, reaches a floor of character accuracy; the default config sends each
page to its language's engine; the Tesseract binary's failures name the file."""

from __future__ import annotations

import random
import re
import shutil

import pymupdf
import pytest
from scanned_pdfs import (
    accuracy,
    body,
    body_truth,
    edit_distance,
    ocr_text,
    page_text,
    scanned,
    truth,
    window,
)

from pipeline.config import ParseConfig
from pipeline.parsing import ocr
from pipeline.parsing.layout import CJK_CHAR, Line
from pipeline.parsing.ocr import script
from pipeline.parsing.pdf import extract_lines, page_lines
from pipeline.parsing.tesseract import OcrError, tesseract_lines

ZH = ("zh/pdf/杨某海交通肇事案.pdf", 1)
EN = ("en/judgments/us_opinions_pdf/ca1_20-1507_opinion.pdf", 1)
# Page 2's eleventh line, "《中华人民共和国民法典》第二十六条第二款规定：“成年子女对父母", RapidOCR's line-angle
# classifier turned upside down and read as "：《》".
ZH_TURNED = ("zh/pdf/唐某纯诉陈某智、陈某勇等赡养纠纷案.pdf", 1)
# Floors under what the helpers of benchmarks/ocr_accuracy.py measured on these pages (zh: RapidOCR 99.9%, Tesseract
# 93.3%; en: Tesseract 99.9%, RapidOCR 94.8%, which reorders the filing stamp); Tesseract is its binary.
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


def test_a_scanned_page_after_a_text_layer_goes_to_that_layers_engine_alone(shared_data, monkeypatch):
    """An English opinion whose later pages are scans: the first scanned page is read by Tesseract
    alone, not first by the Chinese engine that an image-only document's first page is expected in."""
    _require("tesseract")
    read = []
    for name in ("rapid_lines", "tesseract_lines"):
        engine = getattr(ocr, name)
        monkeypatch.setattr(ocr, name, lambda *a, _e=engine, _n=name: read.append(_n) or _e(*a))
    path, pno = EN
    with pymupdf.open(shared_data / path) as source, pymupdf.open() as doc:
        doc.insert_pdf(source, from_page=0, to_page=0)
        ref = truth(source.load_page(pno))
        doc.insert_pdf(scanned(source.load_page(pno), dpi=200))
        pages, sizes, warnings = extract_lines(doc, ParseConfig(), "mixed.pdf")
    assert not warnings and read == ["tesseract_lines"]
    assert accuracy(ref, page_text(pages[1], sizes[1][0])) >= FLOORS["en", "tesseract"]


def test_body_accuracy_leaves_out_the_furniture_on_both_sides(shared_data):
    """The Fifth Circuit's first page: its Bates line repeats over the three pages the furniture pass
    reads and its clerk's stamp stands in the top corner. Both are out of the text layer's body and out
    of the scan's; the caption (in small capitals) and the opinion stay."""
    _require("tesseract")
    with pymupdf.open(shared_data / "en/judgments/us_opinions_pdf/ca5_21-50498_opinion.pdf") as doc:
        pnos = window(doc, 0)
        ref = body_truth(doc, pnos, 0)
        scan = pymupdf.open()
        for pno in pnos:
            scanned(doc.load_page(pno), dpi=200, into=scan)
    assert pnos == [0, 1, 2]
    assert "Document:" not in ref and "Cayce" not in ref and ref.startswith("United States Court of Appeals")
    pages, sizes, _ = extract_lines(scan, ParseConfig(ocr_engine_en="tesseract"), "scan")
    hyp = page_text(body(pages, sizes, 0), sizes[0][0])
    assert "Document:" not in hyp and "Cayce" not in hyp and "VANESSA ST. PIERRE" in hyp
    assert accuracy(ref, hyp) >= FLOORS["en", "tesseract"], hyp[:300]


def test_a_watermark_leaves_the_body_but_not_the_text_it_crosses(shared_data):
    """A case's page under the 人民法院案例库 watermark: only its page number goes from the body; every
    line of text stays, those the tiles cross too."""
    with pymupdf.open(shared_data / ZH_TURNED[0]) as doc:
        pnos = window(doc, 3)
        ref = body_truth(doc, pnos, pnos.index(3))
        page_all = truth(doc.load_page(3))
        layer = " ".join(ln.text for ln in page_lines(doc.load_page(3)))
    assert "人民法院案例库" in layer
    assert ref == page_all.removesuffix("第4页")


def test_a_window_is_three_pages_from_the_page_on_or_the_last_three():
    doc = pymupdf.open()
    for _ in range(10):
        doc.new_page()
    assert window(doc, 0) == [0, 1, 2] and window(doc, 5) == [5, 6, 7] and window(doc, 9) == [7, 8, 9]
    doc.delete_pages(from_page=2, to_page=9)
    assert window(doc, 1) == [0, 1]


def test_rapidocr_reads_upright_lines_as_they_stand(shared_data):
    _require("rapidocr")
    ref, scan = _scan(shared_data, ZH_TURNED)
    hyp, _ = ocr_text(scan, ParseConfig())
    assert "《中华人民共和国民法典》第二十六条第二款" in hyp
    assert accuracy(ref, hyp) >= FLOORS["zh", "rapidocr"]


def test_tesseract_binary_reads_an_english_scan_as_lines_in_page_points(shared_data):
    _require("tesseract")
    ref, scan = _scan(shared_data, EN)
    page = scan.load_page(0)
    config = ParseConfig(ocr_tesseract="binary", ocr_tesseract_psm=3)
    lines = tesseract_lines(page, config, 300, "scan.pdf")
    assert lines and all(
        ln.ocr and page.rect.contains(pymupdf.Rect(ln.x0, ln.y0, ln.x1, ln.y1)) for ln in lines
    )
    assert all(4 < ln.size < 30 for ln in lines)  # the box height in points, not pixels
    hyp, warnings = ocr_text(scan, config)
    assert not warnings and accuracy(ref, hyp) >= FLOORS["en", "tesseract"], hyp[:300]


def test_tesseract_binary_joins_chinese_without_spaces(shared_data):
    _require("tesseract")
    ref, scan = _scan(shared_data, ZH)
    config = ParseConfig(ocr_engine_zh="tesseract", ocr_tesseract="binary")
    lines = tesseract_lines(scan.load_page(0), config, 300, "scan.pdf")
    beside_cjk = re.compile(f"{CJK_CHAR.pattern} | {CJK_CHAR.pattern}")
    assert lines and not any(beside_cjk.search(ln.text) for ln in lines)
    hyp, _ = ocr_text(scan, config)
    assert accuracy(ref, hyp) >= FLOORS["zh", "tesseract"]


def test_tesseract_binary_failure_names_the_file(shared_data, tmp_path):
    _require("tesseract")
    _, scan = _scan(shared_data, EN)
    path = tmp_path / "scan.pdf"
    scan.save(path)
    config = ParseConfig(ocr_engine_zh="tesseract", ocr_language="nosuchlang")
    with (
        pymupdf.open(path) as doc,
        pytest.raises(OcrError, match=rf"{re.escape(str(path))}: tesseract: exit status \d+ \(.+\)"),
    ):
        tesseract_lines(doc.load_page(0), config, 300, str(path))
    with pymupdf.open(path) as doc:  # the parser goes on: the page is a warning naming the file
        _, _, warnings = extract_lines(doc, config, str(path))
    assert len(warnings) == 1 and warnings[0].startswith(f"page 1: OCR failed ({path}: tesseract")
    missing = ParseConfig(ocr_engine_zh="tesseract", ocr_tesseract_binary=str(tmp_path / "no-tesseract"))
    with pymupdf.open(path) as doc, pytest.raises(OcrError, match="not found"):
        tesseract_lines(doc.load_page(0), missing, 300, str(path))


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
