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


def test_a_reporter_page_break_inside_a_paragraph_keeps_the_paragraph_whole(shared_data):
    doc = parse_file(shared_data / "en/judgments/us_opinions_fastcase_xml/SE2d/698/698SE2d424.xml")
    whole = "against Defendant [698 S.E.2d 427] Duke Energy also fail, so we affirm"
    assert sum(whole in b.text for b in doc.blocks) == 1
    assert "[698 S.E.2d 427]" not in [b.text.strip() for b in doc.blocks]


def _case(tmp_path, paragraphs: list[str]):
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    path = tmp_path / "case.xml"
    path.write_text(
        "<Case><ShortName>Doe v. Roe</ShortName><HeaderHtml>&lt;p&gt;DOE v. ROE&lt;/p&gt;</HeaderHtml>"
        f"<CaseHtml>{html.escape(body)}</CaseHtml></Case>",
        encoding="utf-8",
    )
    return [b.text for b in parse_file(path).blocks]


@pytest.mark.parametrize(
    ("before", "after", "joined"),
    [
        ("The trial court found that the defendant had waived the claim when", "he pleaded guilty.", True),
        ("See Segal Lock & Hardware Co. v. Fed. Trade Comm'n, 143 F.2d 935 and the", "Supreme Court.", True),
        (
            "The petition was timely filed and the board reviewed it in the ordinary",
            "Course of events.",
            True,
        ),
        ("The claim of ordinary negligence fails as a matter of law in this case.", "We affirm.", False),
        ("The court heard argument and took the matter under advisement on that day:", "It ruled.", False),
        ("II. DISCUSSION", "The standard of review is de novo.", False),
        ("Opinion of the Court by FOLEY, J.", "Plaintiff appeals.", False),
        ("The action was filed against Smith v.", "Jones, a case decided earlier that term.", True),
    ],
)
def test_a_page_break_joins_only_a_paragraph_it_cuts(tmp_path, before, after, joined):
    texts = _case(tmp_path, [before, "[12 A.3d 345]", "[6 Conn.App. 78]", after])
    assert (f"{before} [12 A.3d 345] [6 Conn.App. 78] {after}" in texts) is joined
    if not joined:
        assert "[12 A.3d 345]" in texts and after in texts
