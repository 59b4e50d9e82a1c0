"""A patent's front page read from its text (pipeline/parsing/kinds/patent_front.py): the fields of a coded
front page whose labels and values a text layer pulls apart, an old patent's running heads and preamble,
and the real PDFs. The front pages below are made up in the layouts the shared PDFs come in."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from pipeline.parsing import parse_file
from pipeline.parsing.kinds.patent_front import front_page

# a text layer as a two-column front page comes out: the title wraps, the filing date sits on the line
# after its label, the grant date comes before its label and the number survives in the barcode line
CODED = """(12) United States Patent
Marsh et al.
(54) VALVE ASSEMBLY FOR A
PRESSURE VESSEL
(75) Inventors: Ada B. Marsh, Leeds (GB); Tom Okafor,
Lagos (NG)
(73) Assignee: Northwind Valves Ltd., Leeds (GB)
( * ) Notice: Subject to any disclaimer, the term of this patent is extended.
(21) Appl. No.: 09/111,222
(22) Filed:
Mar. 3, 1999
(60) Provisional application No. 60/000,111, filed on Mar. 4, 1998.
(56) References Cited
U.S. PATENT DOCUMENTS
4,100,200
8/1981 Smith
US006000123B1
(10) Patent No.:
Jun. 5, 2001 (45) Date of Patent:
"""

# an old patent: the number and grant date in the drawing sheet's head, the inventors and assignee in the
# preamble after the office's name, the filing date in the application line
OLD = """No. 312,645. Patented May 2, 1899. Fig. 1
UNITED STATES PATENT OFFICE.
IMPROVEMENT IN LOOMS.
JOHN HARGREAVE, of Bolton, England, and MARY COLE, of Salford, England, assignors to the
Lancashire Weaving Company, of Manchester, England.
Application filed January 9, 1898. Serial No. 66,101.
"""


def test_a_coded_front_page_is_read_whole():
    f = {name: field.value for name, field in front_page(CODED).items()}
    assert f["number"] == "6000123"
    assert f["granted"] == dt.date(2001, 6, 5)
    assert f["filed"] == dt.date(1999, 3, 3)  # not the provisional application's date
    assert f["title"] == "VALVE ASSEMBLY FOR A PRESSURE VESSEL"
    assert f["inventors"] == ["Ada B. Marsh", "Tom Okafor"]
    assert f["assignee"] == "Northwind Valves Ltd."


def test_an_old_front_page_is_read_from_its_heads_and_preamble():
    f = {name: field.value for name, field in front_page(OLD).items()}
    assert f["number"] == "312645"
    assert f["granted"] == dt.date(1899, 5, 2)
    assert f["filed"] == dt.date(1898, 1, 9)
    assert f["title"] == "IMPROVEMENT IN LOOMS"
    assert f["inventors"] == ["JOHN HARGREAVE", "MARY COLE"]
    assert f["assignee"] == "Lancashire Weaving Company"


def test_a_cited_patent_is_not_the_patents_number():
    """Without a barcode or label, a number standing alone is a column head, unless an issue date follows
    it as in a reference list."""
    text = "References Cited\n4,100,200\n8/1981 Smith\nSome description.\n5,123,456\nMore description."
    assert front_page(text)["number"].value == "5123456"
    assert "number" not in front_page("References Cited\n4,100,200\n8/1981 Smith\n")


def test_a_page_without_a_front_states_nothing():
    assert front_page("The court heard the appeal on 3 March 1999 and dismissed it.") == {}


@given(st.text(alphabet=st.sampled_from("(22) Filed:Jan.Sep 4,2001 9\nUS0AB[]54*Patented"), max_size=300))
def test_every_field_points_at_its_own_words(text):
    for field in front_page(text).values():
        assert 0 <= field.start <= field.end <= len(text)
        if field.name in ("number", "granted", "filed"):
            assert text[field.start : field.end] == field.text


def test_the_shared_pagerank_pdf_states_its_front_page(shared_data):
    doc = parse_file(shared_data / "en" / "patents" / "pdf" / "us-6285999-pagerank.pdf")
    assert doc.title == "METHOD FOR NODE RANKING IN A LINKED DATABASE"
    assert (doc.meta.patent_number, doc.meta.date, doc.meta.filing_date) == (
        "6285999",
        dt.date(2001, 9, 4),
        dt.date(1998, 1, 9),
    )
    assert [(p.name, p.role) for p in doc.meta.parties] == [
        ("Lawrence Page", "inventor"),
        ("The Board of Trustees of the Leland Stanford Junior University", "assignee"),
    ]
