"""PDF parsing on the real PDFs of ../shared/data: every file parses, page furniture is gone, CJK lines
join without spaces, OCR fills image-only pages, and malformed inputs built from real files fail clearly."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, EmptyDocument, EncryptedDocument, TooManyPages, UnsupportedFormat
from pipeline.parsing import parse_file
from pipeline.parsing.cleanup import furniture
from pipeline.parsing.layout import Line, paragraphs
from pipeline.parsing.pdf import extract_lines, open_pdf
from pipeline.parsing.reading import reading_order
from pipeline.records import DocKind

PDF_DIRS = ["zh/pdf", "en/judgments/us_opinions_pdf", "en/patents/pdf", "en/contracts/pdf"]
# OCR of whole scanned patents takes minutes; the sweep reads text layers and the OCR test below
# covers the image-only path.
NO_OCR = ParseConfig(ocr=False)
_HAN_SPACE_HAN = re.compile(r"[\u4e00-\u9fff][ \u3000]+[\u4e00-\u9fff]")
_PAGE_NO = re.compile(r"第\s*\d+\s*页\s*共\s*\d+\s*页|\bPage \d+ of \d+\b")


def _pdfs(shared_data: Path) -> list[Path]:
    return sorted(p for d in PDF_DIRS for p in (shared_data / d).iterdir() if p.suffix.lower() == ".pdf")


def test_every_pdf_parses_without_furniture(shared_data):
    pdfs = _pdfs(shared_data)
    assert len(pdfs) >= 50
    parsed = 0
    for path in pdfs:
        try:
            doc = parse_file(path, NO_OCR)
        except EmptyDocument:
            assert path.name == "opinion_image_only.pdf"  # nothing but a scan: see the OCR test
            continue
        parsed += 1
        assert doc.n_pages and doc.blocks
        for i, b in enumerate(doc.blocks):
            assert doc.text[b.char_start : b.char_end] == b.text and b.block_idx == i
            assert b.page is not None and 0 <= b.page < doc.n_pages
            x0, y0, x1, y1 = b.bbox
            assert x0 <= x1 and y0 <= y1
        assert not _PAGE_NO.search(doc.text), path.name
        if doc.language == "zh":
            assert not _HAN_SPACE_HAN.search(doc.text), path.name
            assert "人民法院案例库" not in doc.text  # the tiled watermark
        if "patents" in str(path) or "contracts" in str(path):
            continue  # the line-level check below runs on the judgments (it re-reads every page)
        # No block is a line detected as furniture on its page (unless the same words are also body text).
        with open_pdf(path, NO_OCR) as pdf:
            pages, sizes, _ = extract_lines(pdf, NO_OCR, str(path))
        drop = furniture(pages, sizes)
        for pno, (lines, gone) in enumerate(zip(pages, drop, strict=True)):
            kept = {ln.text for i, ln in enumerate(lines) if i not in gone}
            blocks = {b.text for b in doc.blocks if b.page == pno}
            for i in gone:
                text = lines[i].text
                assert text in kept or text not in blocks, (path.name, pno, text)
    assert parsed == len(pdfs) - 1


def test_zh_pdf_watermark_and_page_headers_found(shared_data):
    path = shared_data / "zh/pdf/杨某海交通肇事案.pdf"
    with open_pdf(path, NO_OCR) as pdf:
        pages, sizes, _ = extract_lines(pdf, NO_OCR, str(path))
    drop = furniture(pages, sizes)
    removed = [
        ln.text for lines, gone in zip(pages, drop, strict=True) for i, ln in enumerate(lines) if i in gone
    ]
    assert sum(t == "人民法院案例库" for t in removed) >= 6 * len(pages)
    assert sum(bool(re.fullmatch(r"第\s*\d+\s*页", t)) for t in removed) == len(pages)
    doc = parse_file(path, NO_OCR)
    assert doc.kind is DocKind.ZH_JUDGMENT
    assert "杨某海驾驶汽车搭载朋友刘某荧" in doc.text  # a paragraph joined over its line breaks


@pytest.mark.parametrize(
    ("name", "court", "number", "date", "cause"),
    [
        (
            "杨某海交通肇事案",
            "广西壮族自治区玉林市中级人民法院",
            "（2023）桂09刑终328号",
            "2023-11-24",
            "交通肇事",
        ),
        (
            "沈某帅盗窃、王某抢劫案",
            "山东省菏泽市中级人民法院",
            "(2018)鲁17刑终75号",
            "2018-05-16",
            "盗窃、抢劫",
        ),
        (
            "唐某纯诉陈某智、陈某勇等赡养纠纷案",
            "重庆市第五中级人民法院",
            "（2024）渝05民终11440号",
            "2024-12-31",
            "赡养纠纷",
        ),
    ],
)
def test_a_case_report_names_its_deciding_court_in_its_index(shared_data, name, court, number, date, cause):
    """案例库 reports state court, number and date only in 关联索引 (一审 …, 二审 …): the last instance decided."""
    meta = parse_file(shared_data / f"zh/pdf/{name}.pdf", NO_OCR).meta
    assert (meta.court, meta.case_number, str(meta.date), meta.cause) == (court, number, date, cause)


@pytest.mark.parametrize(
    ("name", "parties"),
    [
        ("唐某纯诉陈某智、陈某勇等赡养纠纷案", [("唐某纯", "原告"), ("陈某智", "被告"), ("陈某勇", "被告")]),
        ("郭某华诉李某希等机动车交通事故责任纠纷案", [("郭某华", "原告"), ("李某希", "被告")]),
        ("杨某海交通肇事案", [("杨某海", "被告人")]),
    ],
)
def test_a_case_reports_parties_from_its_title_or_its_defendants(shared_data, name, parties):
    """A report names its parties only in its title (A诉B、C等…案) or, anonymised, as 被告人某某 in its text."""
    meta = parse_file(shared_data / f"zh/pdf/{name}.pdf", NO_OCR).meta
    assert [(p.name, p.role) for p in meta.parties] == parties


def test_ocr_fills_image_only_page(shared_data):
    doc = parse_file(
        shared_data / "en/judgments/us_opinions_pdf/opinion_image_only.pdf", ParseConfig(ocr_language="eng")
    )
    assert doc.blocks and all(b.ocr for b in doc.blocks)
    assert "Foreign Intelligence" in doc.text


def test_ocr_budget_warns(shared_data):
    doc = parse_file(shared_data / "en/patents/pdf/us-6594844-roomba.pdf", ParseConfig(ocr_max_pages=0))
    assert any("OCR skipped" in w for w in doc.warnings)


@pytest.fixture
def real_pdf(shared_data, tmp_path) -> Path:
    path = tmp_path / "opinion.pdf"
    shutil.copy(shared_data / "en/judgments/us_opinions_pdf/circuit_8thCircuit-071306U.pdf", path)
    return path


def test_truncated_pdf(real_pdf, tmp_path):
    data = real_pdf.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptDocument, match="cut.pdf"):
        parse_file(cut)
    tail_lost = tmp_path / "tail.pdf"
    tail_lost.write_bytes(data[: int(len(data) * 0.9)])
    doc = parse_file(tail_lost)  # repairable: parsed, with a warning
    assert any("repaired" in w for w in doc.warnings)


def test_encrypted_pdf(real_pdf, tmp_path):
    locked = tmp_path / "locked.pdf"
    with pymupdf.open(real_pdf) as pdf:
        pdf.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="user")
    with pytest.raises(EncryptedDocument, match="locked.pdf"):
        parse_file(locked)


def _pdf_bytes(objects: list[bytes]) -> bytes:
    """A well-formed PDF (with a correct xref table) holding the given objects."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_zero_page_pdf(tmp_path):
    empty = tmp_path / "zero.pdf"
    empty.write_bytes(_pdf_bytes([b"<</Type/Catalog/Pages 2 0 R>>", b"<</Type/Pages/Kids[]/Count 0>>"]))
    with pytest.raises(EmptyDocument, match="no pages"):
        parse_file(empty)


def test_wrong_extension(real_pdf, tmp_path, shared_data):
    renamed = tmp_path / "opinion.txt"
    shutil.copy(real_pdf, renamed)
    with pytest.raises(UnsupportedFormat, match="extension .txt"):
        parse_file(renamed)
    fake = tmp_path / "notes.pdf"
    fake.write_text("This is plain text that claims to be a PDF.\n", encoding="utf-8")
    with pytest.raises(UnsupportedFormat, match="does not match"):
        parse_file(fake)
    with pytest.raises(UnsupportedFormat, match="unsupported file type"):
        parse_file(shutil.copy(shared_data / "README.md", tmp_path / "README.rtf"))


def test_empty_file_and_page_limit(real_pdf, tmp_path):
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(EmptyDocument, match="0 bytes"):
        parse_file(empty)
    with pytest.raises(TooManyPages, match="page_limit"):
        parse_file(real_pdf, ParseConfig(page_limit=1))


_WORDS = st.text(alphabet=st.sampled_from("abcXYZ本院认为。，-12 "), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_WORDS, st.integers(0, 1), st.integers(0, 3)), min_size=1, max_size=40))
def test_layout_keeps_every_character(rows):
    """Paragraph building reorders and joins lines but never loses text: every non-space character of the
    page survives, except hyphens removed when a word is rejoined across a line break."""
    lines = []
    for i, (text, column, indent) in enumerate(rows):
        x0 = 50 + column * 300 + indent * 12
        lines.append(Line(text.strip() or "x", x0, 100 + i * 14, x0 + 240, 112 + i * 14, 11.0))
    lines = [ln for ln in lines if ln.text]
    out = "".join(p.text for p in paragraphs(reading_order(lines, 612)))
    squeeze = lambda s: "".join(s.split()).replace("-", "")  # noqa: E731
    assert sorted(squeeze(out)) == sorted(squeeze("".join(ln.text for ln in lines)))


def test_a_cjk_line_short_of_the_edge_ends_its_paragraph():
    """CJK text wraps at any character: a line two characters short of the edge ended its paragraph,
    while an English line as short may only have wrapped before a long word."""
    zh = [
        Line("被告人周明远，男，汉族，户籍地江南省临川市。因涉嫌盗窃罪被刑事拘留，", 50, 100, 400, 110, 10),
        Line("同年三月十日被逮捕。现羁押于看守所，羁押期间表现良好。", 50, 115, 378, 125, 10),
        Line("辩护人许晴，江南明理律师事务所律师。", 50, 130, 260, 140, 10),
    ]
    assert [len(p.text) for p in paragraphs([zh])] == [len(zh[0].text) + len(zh[1].text), len(zh[2].text)]
    en = [
        Line("The appellant contends that the judge misdirected himself on the", 50, 100, 400, 110, 10),
        Line("construction of the policy and that the exclusion clause cannot", 50, 115, 378, 125, 10),
        Line("apply to goods in transit.", 50, 130, 180, 140, 10),
    ]
    assert len(paragraphs([en])) == 1


def test_a_cjk_line_wrapped_before_a_number_or_a_closing_mark_carries_on():
    """A CJK line stops short when what follows cannot end it: a number, which is not split, or a mark
    that never starts a line (the character before it goes down too). Its paragraph carries on; a short
    line before a full-width sentence of its own still ends one."""
    edge, em = 400, 10
    lines = [
        Line("广东省广州市增城区人民法院于2025年5月13日作出民事判决：一、某保险公司", 50, 100, edge, 110, em),
        Line("向郭某华赔偿医疗费等", 50, 115, edge - 4 * em, 125, em),
        Line(
            "254496.72元；二、驳回郭某华的其他诉讼请求。宣判后，当事人均未提起上诉，", 50, 130, edge, 140, em
        ),
        Line("判决已发生法律效力。《道路交通安全法》第七十六条第一款规定", 50, 145, edge - 2 * em, 155, em),
        Line("：“机动车发生交通事故造成人身伤亡、财产损失的，由保险公司予以赔偿。", 50, 160, edge, 170, em),
        Line("后方机动车可以超车。", 50, 175, edge - 25 * em, 185, em),
        Line(
            "本院认为，被告人杨某海的行为构成交通肇事罪，应予惩处，判处有期徒刑七个月。",
            50,
            190,
            edge,
            200,
            em,
        ),
    ]
    assert [p.text[:6] for p in paragraphs([lines])] == ["广东省广州市", "本院认为，被"]


def test_real_cjk_paragraphs_run_over_early_wraps(shared_data):
    texts = [
        b.text
        for b in parse_file(
            shared_data / "zh/pdf/郭某华诉李某希等机动车交通事故责任纠纷案.pdf", NO_OCR
        ).blocks
    ]
    assert any("赔偿医疗费等254496.72元；二、驳回郭某华的其他诉讼请求" in t for t in texts)
    assert any("第七十六条第一款规定：“机动车发生交通事故" in t for t in texts)
    for name in ("郭某华诉李某希等机动车交通事故责任纠纷案.pdf", "杨某海交通肇事案.pdf"):
        blocks = parse_file(shared_data / "zh/pdf" / name, NO_OCR).blocks
        assert not [b.text[:20] for b in blocks if b.text[:1] in "：，。、；）”"], name


def test_sample_judgment_keeps_its_defence_paragraph_apart_from_the_charge():
    doc = parse_file(
        Path(__file__).resolve().parents[1] / "data/samples/zh_criminal_judgment.pdf", ParseConfig()
    )
    claims = [b.text for b in doc.blocks if b.type == "CLAIMS"]
    assert claims and not any("辩护人提出" in t for t in claims)
    assert any(b.type == "PARTIES" and b.text.startswith("辩护人许晴") for b in doc.blocks)
