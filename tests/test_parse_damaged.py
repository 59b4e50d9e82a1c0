"""Damaged and hostile inputs: each fails alone with a one-line reason, and text is decoded as what it is."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, DocumentError, UnreadableFile, UnsupportedFormat
from pipeline.parsing import iter_documents, parse_file

CONFIG = ParseConfig(jsonl_text_field="text")


def _jsonl_gz(path, texts: list[str]) -> bytes:
    data = gzip.compress("".join(json.dumps({"text": t}) + "\n" for t in texts).encode())
    path.write_bytes(data)
    return data


def test_bad_gzip_crc_is_this_files_error_and_keeps_the_good_records(tmp_path):
    path = tmp_path / "corpus.jsonl.gz"
    data = bytearray(_jsonl_gz(path, ["The first record.", "The second record."]))
    data[-8] ^= 0xFF  # the CRC32 of the trailer
    path.write_bytes(bytes(data))
    errors: list = []
    docs = list(iter_documents(path, CONFIG, errors=errors))
    assert len(docs) == 2
    assert len(errors) == 1 and isinstance(errors[0], CorruptDocument)
    assert errors[0].source == str(path) and "damaged gzip data" in errors[0].reason


def test_truncated_and_corrupt_deflate_are_one_line_errors(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    data = _jsonl_gz(path, ["x" * 5000 + str(i) for i in range(20)])
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptDocument, match="truncated gzip data"):
        list(iter_documents(path, CONFIG))
    bad = tmp_path / "deflate.jsonl.gz"
    data = bytearray(_jsonl_gz(bad, ["y" * 5000]))
    data[12:40] = b"\xff" * 28  # garbage inside the deflate stream
    bad.write_bytes(bytes(data))
    with pytest.raises(CorruptDocument) as info:
        list(iter_documents(bad, CONFIG))
    assert "\n" not in str(info.value)
    with pytest.raises(zlib.error):  # what the reader would have raised on its own
        gzip.decompress(bytes(data))


def test_a_file_removed_or_unreadable_mid_run_is_its_own_error(tmp_path):
    gone = tmp_path / "gone.txt"
    with pytest.raises(UnreadableFile, match="no such file"):
        parse_file(gone)
    locked = tmp_path / "locked.txt"
    locked.write_text("Some text.")
    locked.chmod(0)
    try:
        if locked.open("rb"):  # root reads anything: nothing to show then
            pytest.skip("running as root")
    except PermissionError:
        with pytest.raises(UnreadableFile, match="ermission"):
            parse_file(locked)
    finally:
        locked.chmod(0o644)


def test_windows_1252_is_not_read_as_gb18030(tmp_path):
    path = tmp_path / "brief.txt"
    text = "The Court\u2019s r\u00e9sum\u00e9s were \u201cexcellent\u201d; the na\u00efve caf\u00e9 owner\u2019s claim failed."
    path.write_bytes(text.encode("cp1252"))
    doc = parse_file(path)
    assert doc.text == text
    assert any("cp1252" in w for w in doc.warnings)


def test_a_gb18030_chinese_judgment_stays_chinese(tmp_path, shared_data):
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        record = json.loads(next(f))
    path = tmp_path / "judgment.txt"
    path.write_bytes(record["fd"].encode("gb18030"))
    doc = parse_file(path)
    assert doc.text == record["fd"].replace("\r\n", "\n").replace("\r", "\n")
    assert doc.language == "zh"


def test_nul_bytes_anywhere_make_a_text_file_binary(tmp_path):
    path = tmp_path / "late.txt"
    path.write_bytes(b"plain words " * 1000 + b"\x00\x00tail")
    with pytest.raises(UnsupportedFormat, match="NUL"):
        parse_file(path)


def test_nul_bytes_named_xml_are_refused_in_one_line(tmp_path):
    path = tmp_path / "zeros.xml"
    path.write_bytes(b"\x00" * 200)
    with pytest.raises(DocumentError, match="not well-formed XML"):
        parse_file(path)


def test_ldx_parse_of_a_truncated_jsonl_gz_says_why(tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app

    path = tmp_path / "cut.jsonl.gz"
    data = _jsonl_gz(path, [" ".join(f"word{i}" for i in range(20000))])  # the first record is cut
    path.write_bytes(data[: len(data) // 2])
    res = CliRunner().invoke(app, ["parse", str(path), "-s", "parse.jsonl_text_field=text"])
    assert res.exit_code == 2 and "truncated gzip data" in res.output and "Aborted" not in res.output
