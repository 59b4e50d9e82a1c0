"""Questions about an opinion's cover, answered from what the parser read there, in the judgment the question
names by its parties, with the block that states the answer."""

from __future__ import annotations

import pytest
from run_tables import write_run_tables

from retrieval.caption_questions import answer_cover, asked_part
from retrieval.covers import Covers
from retrieval.named_documents import case_named

OPINIONS = "en/judgments/us_opinions_pdf"


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Which court decided Mortimer v. Baca?", ("court", None)),
        ("What is the docket number of the Jagels case?", ("number", None)),
        ("When was the opinion in State v. Dyous decided?", ("date", None)),
        ("When was the Jagels opinion filed?", ("date", None)),
        ("Who wrote the opinion in United States v. Vinton?", ("author", None)),
        ("Which judges sat on the panel?", ("judges", None)),
        ("Who is the appellant in Jagels v. State?", ("role", "appellant")),
        ("Who were the parties to the appeal?", ("parties", None)),
        ("When did St. Pierre file her lawsuit?", None),  # the suit, not the opinion
        ("Which court below dismissed the claim?", None),  # the lower court's ruling is in the opinion
        ("Which court was the appeal taken from?", None),
        ("Why was the appeal dismissed?", None),
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
