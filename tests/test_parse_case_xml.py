"""US opinions in a case-law publisher's XML (Fastcase `<Case>`): the page as text, typed like any opinion,
and the record's own fields as the document's metadata."""

from __future__ import annotations

import datetime as dt
import html
import re
import xml.etree.ElementTree as ET

import pytest

from pipeline.errors import EmptyDocument, UnsupportedFormat
from pipeline.parsing import parse_file
from pipeline.records import BlockType as T
from pipeline.records import DocKind


def _fields(path):
    root = ET.parse(path).getroot()
    return {k: (root.findtext(f".//{k}") or "").strip() for k in ("ShortName", "CourtName", "DecisionDate")}


def test_every_shared_case_reads_with_its_fields(shared_data):
    paths = sorted((shared_data / "en/judgments/us_opinions_fastcase_xml").rglob("*.xml"))
    assert len(paths) >= 30
    two_sided = 0
    for path in paths:
        doc = parse_file(path)
        want = _fields(path)
        assert doc.kind is DocKind.EN_JUDGMENT and doc.language == "en"
        assert doc.title == re.sub(r"\s+", " ", html.unescape(want["ShortName"])).strip(" .")
        assert doc.meta.court == re.sub(r"\s+", " ", html.unescape(want["CourtName"])).strip(" .")
        parts = [int(x) for x in re.findall(r"\d+", want["DecisionDate"])]
        y, m, d = parts if parts[0] > 31 else (parts[2], parts[0], parts[1])
        assert doc.meta.date == dt.date(y, m, d)
        types = [b.type for b in doc.blocks]
        assert types[0] is T.HEADER and T.PARTIES in types[:12]
        assert {T.OPINION, T.FACTS, T.VERDICT} & set(types[-5:])  # the opinion, typed as an opinion
        assert "<" not in doc.text and "&lt;" not in doc.text  # the page's markup is gone
        two_sided += sum(p.role != "" for p in doc.meta.parties) >= 2 or len(doc.meta.parties) >= 2
    assert two_sided >= len(paths) - 4  # a one-sided caption ("In re J.W.") names one party


def test_the_caption_fields_of_one_case(shared_data):
    doc = parse_file(shared_data / "en/judgments/us_opinions_fastcase_xml/NW2d/753/753NW2d552_1.xml")
    assert doc.title == "Town of Merrimac v. Village of Merrimac"
    assert doc.meta.case_number == "2007AP2491" and doc.meta.citation == "753 N.W.2d 552"
    assert [(p.name, p.role) for p in doc.meta.parties] == [
        ("TOWN OF MERRIMAC", "plaintiff-appellant"),
        ("VILLAGE OF MERRIMAC", "defendant-respondent"),
    ]
    assert [j.split()[-1].lower() for j in doc.meta.judges][:3] == ["dykman", "lundsten", "bridge"]


def test_a_case_without_its_page_is_refused(tmp_path):
    empty = tmp_path / "empty.xml"
    empty.write_text("<Case><ShortName>A v. B</ShortName><HeaderHtml></HeaderHtml></Case>", encoding="utf-8")
    with pytest.raises(EmptyDocument, match="empty.xml"):
        parse_file(empty)
    other = tmp_path / "other.xml"
    other.write_text("<Case><Name>not a publisher's record</Name></Case>", encoding="utf-8")
    with pytest.raises(UnsupportedFormat, match=r"<Case>"):
        parse_file(other)
