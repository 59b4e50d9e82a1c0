"""An American opinion's cover: the caption's parties and roles, the docket, the date of decision, the panel
and the short case name; and the English dates every reader of a cover shares."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from pipeline.config import ParseConfig
from pipeline.parsing import build, parse_file
from pipeline.parsing.kinds.case_names import short_name, short_title
from pipeline.parsing.kinds.dates import parse_date
from pipeline.parsing.kinds.en_caption import read_caption
from pipeline.parsing.text import from_text
from pipeline.records import Party

# A cover whose two columns the text layer ran together, as a circuit court's PDF prints them (made up).
COVER = [
    "FOR PUBLICATION",
    "UNITED STATES COURT OF APPEALS",
    "FOR THE NINTH CIRCUIT",
    "MARGARET A. OKAFOR, individually and on behalf of others similarly situated;",
    "No. 12-34567 PETER LINDQVIST; HARBOR FREIGHT LINES, INC.,",
    "D.C. No. Plaintiffs-Appellants, 2:10-cv-01234-ABC v.",
    "OPINION COUNTY OF MARIPOSA,",
    "Defendant-Appellee.",
    "Appeal from the United States District Court for the Eastern District of California",
    "Argued and Submitted March 3, 2012—San Francisco, California",
    "Filed June 18, 2012",
    "Before: Ana T. Whitfield and Samuel R. Oduya, Circuit Judges, and Lena Marsh,* District Judge.",
    "Opinion by Judge Oduya",
]


def test_a_run_together_caption_is_read_whole():
    cap = read_caption(COVER, ["ODUYA, Circuit Judge: The county appeals …"])
    assert cap.court == "United States Court of Appeals for the Ninth Circuit"
    assert cap.number == "12-34567"  # not the district court's number
    assert cap.date == dt.date(2012, 6, 18)  # filed, not argued
    assert [(p.name, p.role) for p in cap.parties] == [
        ("MARGARET A. OKAFOR", "plaintiffs-appellants"),
        ("PETER LINDQVIST", "plaintiffs-appellants"),
        ("HARBOR FREIGHT LINES, INC", "plaintiffs-appellants"),
        ("COUNTY OF MARIPOSA", "defendant-appellee"),
    ]
    assert cap.judges == ["Ana T. Whitfield", "Samuel R. Oduya", "Lena Marsh"]
    assert cap.title == "Okafor v. Cnty. of Mariposa"


def test_a_reporter_header_without_roles():
    lines = ["412 N.W.2d 77", "STATE of Wisconsin", "v.", "Darnell K. HOLLOWAY.", "No. 2011AP88-CR.",
             "Court of Appeals of Wisconsin.", "Argued May 2, 2012.", "Decided Sept. 4, 2012.",
             "LUNDQUIST, PEREZ and ABARA, JJ."]  # fmt: skip
    cap = read_caption(lines, ["PEREZ, J. The defendant appeals …"])
    assert cap.court == "Court of Appeals of Wisconsin" and cap.number == "2011AP88-CR"
    assert cap.date == dt.date(2012, 9, 4)
    assert [p.name for p in cap.parties] == ["STATE of Wisconsin", "Darnell K. HOLLOWAY"]
    assert cap.title == "State v. Holloway"
    assert cap.judges == ["Lundquist", "Perez", "Abara"]


def test_short_names_as_citations_write_them():
    assert short_name("UNITED STATES OF AMERICA") == "United States"
    assert short_name("COMMONWEALTH of Pennsylvania") == "Commonwealth"
    assert short_name("JERROLD MARTIN, JR.") == "Martin"
    assert short_name("Vanessa St. Pierre") == "St. Pierre"
    assert short_name("Eastern Mutual Insurance Company") == "Eastern Mut. Ins. Co."
    assert short_name("ATTORNEY GRIEVANCE COMMISSION OF MARYLAND") == "Attorney Grievance Comm'n of Md."
    assert short_name("STATE OF OHIO, ex rel. DANA WILCOX") == "State ex rel. Wilcox"
    assert short_name("GREENFIELD HOLDINGS, LLC") == "Greenfield Holdings, LLC"
    assert (
        short_title([Party("In re Orchard Valley Water Litigation", "")])
        == "In re Orchard Valley Water Litig."
    )
    assert short_title([Party("A", "x"), Party("", "_versus"), Party("B", "y")]) == "A v. B"


def test_an_english_cover_keeps_its_own_reading():
    """Neutral citation, "Between", names over roles: the US caption reader stays out of it."""
    text = (
        "Neutral Citation Number: [2020] EWCA Civ 999\nCase No: A1/2019/0001\n"
        "IN THE COURT OF APPEAL (CIVIL DIVISION)\nDate: 03/02/2020\nBefore :\nLORD JUSTICE HALDANE\n"
        "Between :\nALPHA LIMITED\nAppellant\n- and -\nBETA PLC\nRespondent\n"
        "1. This appeal concerns a contract for the carriage of goods between the parties, and the judge "
        "below "
        "held that the claim failed on the facts found at trial in the High Court."
    )
    doc = build(from_text(text, "x"), "x", "0" * 16, ParseConfig(kind="en_judgment"))
    assert doc.meta.case_number == "A1/2019/0001" and doc.meta.date == dt.date(2020, 2, 3)
    assert [(p.name, p.role) for p in doc.meta.parties] == [
        ("ALPHA LIMITED", "appellant"),
        ("BETA PLC", "respondent"),
    ]
    assert doc.title == "ALPHA LIMITED v BETA PLC"


@given(
    st.dates(dt.date(1850, 1, 1), dt.date(2099, 12, 31)),
    st.sampled_from(["%B %d, %Y", "%b. %d, %Y", "%d %B %Y"]),
)
def test_dates_read_as_printed(day, form):
    assert parse_date(f"Decided {day.strftime(form)}.") == day


def test_the_tax_court_caption(shared_data):
    doc = parse_file(
        shared_data / "en/judgments/us_opinions_pdf/tax_court_tc_memo_2020-26.pdf", ParseConfig(ocr=False)
    )
    assert doc.meta.court == "United States Tax Court" and doc.meta.date == dt.date(2020, 2, 20)
    assert [(p.name, p.role) for p in doc.meta.parties] == [
        ("ROCK BORDELON", "petitioners"),
        ("TORIE BORDELON", "petitioners"),
        ("COMMISSIONER OF INTERNAL REVENUE", "respondent"),
    ]
    assert doc.title == "Bordelon v. Commissioner" and doc.meta.judges == ["Gustafson"]
