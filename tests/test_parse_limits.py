"""Bounded reading: gzip bombs, over-long lines, huge pages, endless OCR and slow documents end as one
error each (never as the memory or time they would take), and damaged containers as one-line errors."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pymupdf
import pytest

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, DocumentError, EmptyDocument, OverLimit
from pipeline.parsing import iter_documents, parse_file
from pipeline.parsing.limits import capped_lines
from pipeline.parsing.pdf import extract_lines, ocr_dpi, open_pdf

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
MiB = 2**20
SMALL = ParseConfig(max_decompressed_bytes=8 * MiB, max_line_bytes=1 * MiB)


def _judgments(shared_data: Path, n: int) -> list[bytes]:
    """n real judgments as JSONL lines the parser reads."""
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        recs = [json.loads(next(f)) for _ in range(n)]
    return [json.dumps({"text": r["fd"]}, ensure_ascii=False).encode() + b"\n" for r in recs]


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_an_xml_gzip_bomb_is_one_error_and_never_held_whole(tmp_path):
    bomb = tmp_path / "bomb.xml.gz"
    bomb.write_bytes(gzip.compress(b'<?xml version="1.0"?><us-patent-grant>' + b" " * (64 * MiB), 9))
    assert bomb.stat().st_size < MiB  # 64 MiB of content in a small file

    def read():
        with pytest.raises(OverLimit, match="max_decompressed_bytes"):
            list(iter_documents(bomb, SMALL, errors=[]))

    assert _peak(read) < 3 * SMALL.max_decompressed_bytes


def test_a_jsonl_line_over_the_cap_is_its_own_error_and_the_rest_is_read(shared_data, tmp_path):
    good = _judgments(shared_data, 3)
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress(good[0] + b'{"text": "' + b"x" * (32 * MiB) + b'"}\n' + good[1] + good[2]))
    errors: list[DocumentError] = []
    docs: list = []
    config = ParseConfig(max_line_bytes=MiB)  # the line cap alone: 32 MiB in all is under the total one
    peak = _peak(lambda: docs.extend(iter_documents(path, config, errors)))
    assert len(docs) == 3
    assert [(type(e), e.source) for e in errors] == [(OverLimit, f"{path}:2")]
    assert "max_line_bytes" in str(errors[0]) and "\n" not in str(errors[0])
    assert peak < 16 * MiB  # the 32 MiB line was never held


def test_a_jsonl_gzip_bomb_stops_at_the_cap_with_one_error(shared_data, tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(_judgments(shared_data, 1)[0] + (b" " * 1023 + b"\n") * (64 * 1024), 9))
    errors: list[DocumentError] = []
    got = list(iter_documents(path, SMALL, errors))
    assert len(got) == 1
    assert len(errors) == 1 and isinstance(errors[0], OverLimit) and "the rest is not read" in str(errors[0])


def test_a_one_line_jsonl_bomb_is_one_error_read_no_further_than_the_cap(tmp_path):
    """One record that inflates past both caps: a single error row for the file (not one for the line and
    one for the file), and the skip stops at the total cap instead of reading the bomb to its end."""
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"text": "' + b"a" * (64 * MiB), 9))
    errors: list[DocumentError] = []
    read = []

    class Counting(gzip.GzipFile):
        def readline(self, size=-1):
            line = super().readline(size)
            read.append(len(line))
            return line

    with Counting(path, "rb") as f:
        got = list(capped_lines(f, str(path), SMALL.max_line_bytes, SMALL.max_decompressed_bytes))
    assert len(got) == 1 and isinstance(got[0], OverLimit) and got[0].source == str(path)
    assert "max_decompressed_bytes" in str(got[0]) and "line 1 over" in str(got[0])
    assert sum(read) <= SMALL.max_decompressed_bytes + 2 * MiB
    assert list(iter_documents(path, SMALL, errors)) == [] and len(errors) == 1


def test_a_truncated_jsonl_gzip_keeps_its_whole_records(shared_data, tmp_path):
    data = gzip.compress(b"".join(_judgments(shared_data, 3)))
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    errors: list[DocumentError] = []
    got = list(iter_documents(path, ParseConfig(), errors))
    assert len(got) >= 1 and len(errors) == 1 and isinstance(errors[0], CorruptDocument)


def test_a_text_file_over_the_cap_is_refused(shared_data, tmp_path):
    path = tmp_path / "long.txt"
    path.write_bytes(b"".join(_judgments(shared_data, 4)) * 100)
    with pytest.raises(OverLimit, match="max_decompressed_bytes"):
        parse_file(path, ParseConfig(max_decompressed_bytes=MiB))


def _blank_pdf(path: Path, inches: float, pages: int = 1) -> Path:
    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page(width=72 * inches, height=72 * inches)
    doc.save(path)
    return path


def test_ocr_of_a_huge_page_renders_at_a_lower_dpi(tmp_path):
    config = ParseConfig()
    assert ocr_dpi(612, 792, config) == config.ocr_dpi  # Letter keeps its 300 dpi
    for inches in (60, 200):
        dpi = ocr_dpi(72 * inches, 72 * inches, config)
        assert (inches * dpi) ** 2 <= config.ocr_max_pixels
        path = _blank_pdf(tmp_path / f"page{inches}.pdf", inches)
        with open_pdf(path, config) as doc:
            _, _, warnings = extract_lines(doc, config, str(path))
        assert f"page 1: OCR at {dpi} dpi, a large page (parse.ocr_max_pixels)" in warnings
        with pytest.raises(EmptyDocument):  # one error, whatever the OCR engine made of the blank page
            parse_file(path, config)


def test_ocr_stops_after_the_default_page_budget(tmp_path):
    config = ParseConfig()
    path = _blank_pdf(tmp_path / "blank.pdf", 8.5, config.ocr_max_pages + 2)
    with open_pdf(path, config) as doc:
        _, _, warnings = extract_lines(doc, config, str(path))
    skipped = [w for w in warnings if "OCR skipped (parse.ocr_max_pages)" in w]
    assert [w.split(":")[0] for w in skipped] == [
        f"page {config.ocr_max_pages + 1}",
        f"page {config.ocr_max_pages + 2}",
    ]


def test_a_document_over_its_time_limit_is_one_error():
    path = SAMPLES / "zh_civil_judgment.pdf"
    with pytest.raises(OverLimit, match=r"max_doc_seconds\); stopped at page 1 of"):
        parse_file(path, ParseConfig(max_doc_seconds=0))
    assert parse_file(path, ParseConfig()).blocks  # the default leaves it room


@pytest.mark.parametrize("tail", [b"\x00" * 600, bytes(range(256)) * 16, b"\xff" * 3000])
def test_an_ole_header_before_junk_is_a_damaged_container(tmp_path, tail):
    path = tmp_path / "junk.doc"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + tail)
    with pytest.raises(CorruptDocument, match="damaged OLE container") as e:
        parse_file(path)
    assert "\n" not in str(e.value)


def test_real_doc_files_still_parse(shared_data):
    for path in sorted((shared_data / "zh/doc").glob("*.doc")):
        assert parse_file(path).blocks
