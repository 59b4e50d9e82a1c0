"""The court site's .doc downloads, Chinese header metadata against 裁判文书网's own fields, contracts,
and `ldx parse` on the command line."""

from __future__ import annotations

import ast
import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from flows.cli import app
from pipeline.config import ParseConfig
from pipeline.errors import UnsupportedFormat
from pipeline.parsing import build, parse_file
from pipeline.parsing.text import from_text
from pipeline.records import BlockType as T
from pipeline.records import DocKind


def test_court_site_doc(shared_data):
    paths = sorted((shared_data / "zh/doc").glob("*.doc"))
    assert len(paths) == 4
    for path in paths:
        doc = parse_file(path)
        assert doc.kind is DocKind.ZH_JUDGMENT and doc.language == "zh"
        assert doc.meta.doc_type == "裁定书" and doc.meta.court.endswith("人民法院")
        assert re.fullmatch(r"（\d{4}）.+号", doc.meta.case_number)
        assert doc.meta.cause and doc.meta.cause.endswith("纠纷") and doc.meta.cause in path.name
        assert doc.meta.judges and doc.meta.date is not None
        types = [b.type for b in doc.blocks]
        assert (
            types.index(T.PARTIES)
            < types.index(T.OPINION)
            < types.index(T.VERDICT)
            < types.index(T.SIGNATURE)
        )
        assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", doc.text)


def test_ole_without_html_is_refused(shared_data, tmp_path):
    import olefile

    src = sorted((shared_data / "zh/doc").glob("*.doc"))[0]
    with olefile.OleFileIO(str(src)) as ole:
        size = len(ole.openstream("WordDocument").read())
    binary = tmp_path / "binary.doc"
    shutil.copy(src, binary)
    with olefile.OleFileIO(str(binary), write_mode=True) as ole:
        ole.write_stream("WordDocument", b"\xec\xa5" + b"\x00" * (size - 2))  # a Word 97 FIB, not HTML
    with pytest.raises(UnsupportedFormat, match="binary Word"):
        parse_file(binary)


def test_wenshu_metadata(shared_data):
    """Court, date and 案由 found in the text, against the fields 裁判文书网 publishes with each document."""
    n = court = date = cause = 0
    with open(shared_data / "zh/judgments/wenshu_mixed.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            meta = r["meta"] if isinstance(r["meta"], dict) else ast.literal_eval(r["meta"])
            doc = build(from_text(r["text"], r["docid"]), r["docid"], "0" * 16, ParseConfig())
            n += 1
            found, stated = doc.meta.court or "", meta.get("审理法院") or ""
            court += bool(found) and (found.endswith(stated) or stated.endswith(found))
            date += str(doc.meta.date) == meta.get("裁判日期")
            c = doc.meta.cause or ""
            cause += bool(c) and (c in meta.get("案由", "") or meta.get("案由", "") in c)
    print(f"\nwenshu_mixed: {n} documents; court {court / n:.1%}, date {date / n:.1%}, 案由 {cause / n:.1%}")
    assert court / n >= 0.7 and date / n >= 0.6 and cause / n >= 0.6


def test_contract_pdfs(shared_data):
    pdfs = sorted(p for p in (shared_data / "en/contracts/pdf").iterdir() if p.suffix.lower() == ".pdf")
    contracts = with_parties = with_signature = 0
    for path in pdfs:
        doc = parse_file(path, ParseConfig(ocr=False))
        if doc.kind is not DocKind.CONTRACT:
            continue
        contracts += 1
        types = {b.type for b in doc.blocks}
        assert T.CLAUSE in types
        with_parties += T.PARTIES in types
        with_signature += T.SIGNATURE in types
    print(
        f"\ncontract PDFs: {contracts}/{len(pdfs)} detected; parties found {with_parties}, signature {with_signature}"
    )
    assert contracts >= len(pdfs) - 2
    assert with_parties >= 0.8 * contracts and with_signature >= 0.6 * contracts


def test_cli_parse(shared_data, tmp_path):
    runner = CliRunner()
    src = shared_data / "zh/doc"
    path = sorted(src.glob("*.doc"))[0]
    result = runner.invoke(app, ["parse", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "zh_judgment" and data["blocks"][0]["type"] == "HEADER"
    assert all(data["text"][b["char_start"] : b["char_end"]] == b["text"] for b in data["blocks"])
    table = runner.invoke(app, ["parse", str(path)])
    assert table.exit_code == 0 and "VERDICT" in table.output
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    failed = runner.invoke(app, ["parse", str(empty)])
    assert failed.exit_code != 0 and "EmptyDocument" in failed.output and "empty.pdf" in failed.output
