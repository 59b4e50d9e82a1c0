"""Questions about an opinion's cover, answered from what the parser read there, in the judgment the question
names by its parties, with the block that states the answer."""

from __future__ import annotations

import pytest
from run_tables import write_run_tables

from pipeline.parsing import parse_file
from retrieval.appeal_cover import counsel
from retrieval.caption_questions import answer_cover, asked_part
from retrieval.covers import Cover, Covers
from retrieval.named_documents import case_named

OPINIONS = "en/judgments/us_opinions_pdf"
EWCA = "en/judgments/uk_ewca_2020_xml"


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Which court decided Mortimer v. Baca?", ("court", None)),
        ("What is the docket number of the Jagels case?", ("number", None)),
        ("When was the opinion in State v. Dyous decided?", ("date", "decided")),
        ("When was the Jagels opinion filed?", ("date", "filed")),
        ("Who wrote the opinion in United States v. Vinton?", ("author", None)),
        ("Who wrote the dissenting opinion?", None),  # a separate opinion's author
        ("Which judges sat on the panel?", ("judges", None)),
        ("Who is the appellant in Jagels v. State?", ("role", "appellant")),
        ("Who were the parties to the appeal?", ("parties", None)),
        ("When did St. Pierre file her lawsuit?", None),  # the suit, not the opinion
        ("Which court was the appeal taken from?", ("court below", None)),
        ("Which court heard the case at first instance?", ("court below", None)),
        ("From which court was the appeal brought?", ("court below", None)),
        ("Who gave the leading judgment?", ("author", None)),
        ("Who gave the judgment below?", ("judge below", None)),
        ("Which court was the appeal brought in?", ("court", None)),
        ("Who was the judge below?", ("judge below", None)),
        ("Which judge's decision was under appeal?", ("judge below", None)),
        ("Who was the appellant below?", ("role", "appellant")),  # a party, not the judge
        ("What did the trial judge decide?", None),  # the opinion says, not the cover
        ("What did the court below decide?", None),
        ("What is the neutral citation of this judgment?", ("citation", None)),
        ("How is this judgment cited?", ("citation", None)),
        ("Who appeared for the appellant?", ("counsel", "appellant")),
        ("Who represented the respondents?", ("counsel", "respondents")),
        ("Who was counsel for the claimant?", ("counsel", "claimant")),
        ("Which solicitors instructed counsel for the appellant?", ("solicitors", "appellant")),
        ("Who were the respondent's solicitors?", ("solicitors", "respondent")),
        ("When was the appeal heard?", ("heard", None)),
        ("What were the hearing dates?", ("heard", None)),
        ("Why was the appeal dismissed?", None),
        ("Who appealed against the Administrative Court's judgment?", ("role", "appellant")),
        (
            "Which judge decided the claim in the Administrative Court?",
            ("judge below", "administrative court"),
        ),
        ("Who sat in the Court of Appeal?", ("judges", None)),  # this court, not one below
    ],
)
def test_what_a_question_asks_of_a_cover(question, asked):
    assert asked_part(question) == asked


@pytest.fixture(scope="module")
def two_opinions(tmp_path_factory, shared_data):
    out = tmp_path_factory.mktemp("covers")
    ids = {}
    for name in ("tax_court_tc_memo_2020-26.pdf", "ca1_20-1507_opinion.pdf"):
        doc, _ = write_run_tables(out, shared_data / OPINIONS / name)
        ids[name[:3]] = doc.doc_id
    return Covers(out), ids


def test_the_judgment_a_question_names(two_opinions):
    covers, ids = two_opinions
    titles = {doc: title for doc, (_, title, _) in covers.heads().items()}
    assert case_named("Which court decided the Bordelon case?", titles) == ids["tax"]
    assert case_named("Who is the appellee in Calvary Chapel v. Mills?", titles) == ids["ca1"]
    assert case_named("Was the Chapel's appeal dismissed?", titles) == ids["ca1"]
    assert case_named("Which court decided the case?", titles, loose=True) is None  # names no one judgment
    # a cover question names its case by whatever it calls it; any other question by a case's name
    assert case_named("Who is the appellee in Calvary Chapel?", titles, loose=True) == ids["ca1"]
    assert case_named("Did Calvary Chapel ask for an injunction?", titles) is None


def test_each_part_of_a_cover_with_the_block_that_states_it(two_opinions):
    covers, ids = two_opinions
    tax, ca1 = covers.cover(ids["tax"], "en_judgment"), covers.cover(ids["ca1"], "en_judgment")
    assert covers.cover(ids["tax"], "zh_judgment") is None  # an English opinion has no Chinese head
    blocks = {i: t for i, _, t in tax.blocks}
    for asked, text, printed in [
        (("court", None), "United States Tax Court", "UNITED STATES TAX COURT"),
        (("date", None), "February 20, 2020", "Filed February 20, 2020"),  # as printed
        (("role", "petitioner"), "Rock Bordelon and Torie Bordelon", "ROCK BORDELON AND TORIE BORDELON"),
        (("role", "respondent"), "Commissioner of Internal Revenue", "COMMISSIONER OF INTERNAL REVENUE"),
        (("author", None), "Gustafson", "GUSTAFSON, Judge:"),
    ]:
        found = answer_cover(tax, *asked)
        assert found.text == text and printed in blocks[found.block_idx], asked
    number = answer_cover(ca1, "number", None)
    assert (
        number.text == "20-1507" and "No. 20-1507" in dict((i, t) for i, _, t in ca1.blocks)[number.block_idx]
    )
    parties = answer_cover(ca1, "parties", None).text
    assert parties == "Calvary Chapel of Bangor (plaintiff-appellant); Janet T. Mills (defendant-appellee)"
    assert answer_cover(ca1, "judges", None).text == "Howard, Selya and Barron"


@pytest.fixture(scope="module")
def appeals(tmp_path_factory, shared_data):
    """Three Court of Appeal covers as LegalDocML prints them: one with its lines run together (1707), one
    whose metadata dates the judgment by its hearing (733), one with many counsel (1475)."""
    out = tmp_path_factory.mktemp("appeals")
    ids = {
        number: write_run_tables(out, shared_data / EWCA / f"2020-ewca-{number}-civ.xml.gz")[0].doc_id
        for number in (1707, 733, 1475)
    }
    covers = Covers(out)
    return {number: covers.cover(doc, "en_judgment") for number, doc in ids.items()}


def test_what_an_appeal_cover_says_of_the_court_below_and_counsel(appeals):
    def said(number, part, side=None):
        found = answer_cover(appeals[number], part, side)
        blocks = {i: t for i, _, t in appeals[number].blocks}
        assert found.anchor.lower() in blocks[found.block_idx].lower(), (number, part)  # cited where printed
        return found.text

    court = "THE HIGH COURT OF JUSTICE BUSINESS AND PROPERTY COURTS OF ENGLAND & WALES COMMERCIAL COURT (QBD)"
    assert said(1707, "court below") == court  # run together with the Court of Appeal's own name
    assert said(1707, "judge below") == "Mr Justice Jacobs"  # not the lower court's citation after it
    assert said(1707, "citation") == "[2020] EWCA Civ 1707"
    # counsel's names run over two blocks; the solicitors are not counsel
    assert said(1707, "counsel", "appellant") == "Mr David Joseph QC, Mr Adam Kramer and Mr Ian Higgins"
    assert said(1707, "solicitors", "appellant") == "Latham & Watkins LLP"
    assert said(1707, "counsel", "respondent") == "Mr Robin Dicker QC and Ms Roseanna Darcy"
    assert said(1707, "role", "appellant") == "Prof. Dr. Lucas Flöther"  # "(Defendant/Appellant)"
    assert said(1707, "heard") == "25 & 26 November 2020"  # both days
    assert said(733, "court below") == "THE EMPLOYMENT APPEAL TRIBUNAL"
    assert said(733, "judge below") == "Soole J"  # as a reader writes the capitals
    assert said(733, "judge below", "employment appeal tribunal") == "Soole J"  # the court named is below
    assert answer_cover(appeals[733], "judge below", "high court") is None
    assert said(733, "date") == "11 June 2020"  # the cover's "Date: 11/06/2020", not the metadata's 28 April
    assert said(733, "parties") == "Khalid Tabidi (appellant); British Broadcasting Corporation (respondent)"
    assert said(1475, "judge below") == "Roth J, Fancourt J, Hodge Malek QC"
    assert said(1475, "number") == "C3/2020/0619 C3/2020/0625 C3/2020/0627 C3/2020/0643 C3/2020/0648"
    # several entries for one side, each with the words that say which
    respondents = said(1475, "counsel", "respondent").split("; ")
    assert len(respondents) == 3 and respondents[0].startswith("Mr Tim Ward QC, Mr Ben Lask and Ms Anneliese")
    ryder = "Mr Mark Brealey QC and Mr Derek Spitz (for the Respondents in the appeals in the Ryder Limited"
    assert respondents[1] == f"{ryder} action)"
    assert answer_cover(appeals[1475], "counsel", "intervener") is None  # no one spoke for an intervener


def test_a_hearing_date_is_not_the_date_of_judgment():
    head = [
        (0, "HEADER", "Neutral Citation Number: [2020] EWCA Civ 1"),
        (1, "HEADER", "Hearing date: 3 May 2020"),
    ]
    cover = Cover("en_judgment", "A v B", {"citation": "[2020] EWCA Civ 1", "date": None}, head)
    assert answer_cover(cover, "date", None) is None
    assert answer_cover(cover, "heard", None).text == "3 May 2020"


def test_counsel_whose_instructing_solicitors_open_the_next_line(shared_data):
    doc = parse_file(shared_data / EWCA / "2020-ewca-1046-civ.xml.gz")
    cover = Cover("en_judgment", "", {}, [(b.block_idx, b.type.value, b.text) for b in doc.blocks[:80]])
    (appellant, _), (respondent, _) = counsel(cover)
    assert appellant.names.startswith("Mr Ben Collins QC, Ms Nadia Motraghi")
    assert (appellant.solicitors, appellant.role) == ("TMP Solicitors LLP", "Appellant")
    assert respondent.role == "Respondent and Interested Party"  # the side as printed, to the line's end
