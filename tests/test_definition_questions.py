"""What a term a contract or a patent defines means, read from the sentence that defines it."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.parsing import parse_file
from pipeline.paths import SHARED_DATA
from retrieval.definition_questions import asked_term, definition_answer, definitions, spelled_out
from retrieval.hybrid import Passage


def _document(*paragraphs: str) -> list[Passage]:
    return [Passage(f"s{i}", "d", text, "OTHER") for i, text in enumerate(paragraphs)]


CONTRACT = _document(
    "This Supply Agreement (“Agreement”) is made as of March 3, 2020 (the “Effective Date”) by and between "
    "Acme Tools, Inc. (“Acme”), a Delaware corporation, and Brightline Retail, LLC, a Texas limited "
    "liability company (“Brightline”).",
    "1. Definitions. “Business Day” shall mean any day other than a Saturday, a Sunday or a bank holiday in "
    "New York. “Term” has the meaning given in Section 9. “Territory” means the United States and Canada.",
    "Acme may disclose its plans to Brightline's employees, officers and advisors (collectively, the "
    "“Representatives”) on a need to know basis.",
    "Brightline shall buy the products listed in Schedule A (the “Products”). The Territory is "
    "where Brightline may sell the Products during the Term, and a Business Day is when orders ship.",
    "9. This Agreement lasts during the period beginning on the Effective Date and ending on June 30, 2023 "
    "(the “Term”).",
)
PATENT = _document(
    "As used herein, the terms “couple” and “coupled” mean to join one element to another, directly or "
    "through intermediate parts.",
    "By the term “fibrate drug” we mean the class of drugs derived from fibric acid.",
    "The term antisense refers to nucleotide sequences complementary to a specific DNA or RNA sequence.",
    "The couple of brackets is coupled to the rail.",
)


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ('What does "Business Day" mean in the supply agreement?', "Business Day"),
        ("What is meant by Representatives in the supply agreement?", "Representatives"),
        ("How is the Territory defined?", "Territory"),
        ("How does the supply agreement define the “Products”?", "Products"),
        ("What is the definition of Term under this agreement?", "Term"),
        ("What does the term mimetic refer to in the patent?", "mimetic"),
        ("What are 'Inventions' as defined in the consulting agreement?", "Inventions"),
        ("What is the Effective Date of the agreement?", "Effective Date"),
        ("What is the governing law of the agreement?", None),
        ("What is claimed in claim 1?", None),
        ("What does the court mean by reasonable?", None),
        ("Who are the parties to the agreement?", None),
    ],
)
def test_the_term_a_question_asks_about(question, term):
    assert asked_term(question) == term


@pytest.mark.parametrize(
    ("question", "meaning"),
    [
        (
            "What does “Business Day” mean?",
            "any day other than a Saturday, a Sunday or a bank holiday in New York",
        ),
        ("What does Territory mean?", "the United States and Canada"),
        ("What is the Effective Date?", "March 3, 2020"),
        ("What does “Acme” refer to?", "Acme Tools, Inc."),
        ("What does “Brightline” refer to?", "Brightline Retail, LLC"),
        ("How are the Products defined?", "the products listed in Schedule A"),
        ("What is meant by Representatives?", "Brightline's employees, officers and advisors"),
        (
            "How is the Term defined?",
            "the period beginning on the Effective Date and ending on June 30, 2023",
        ),
    ],
)
def test_a_contract_s_definitions(question, meaning):
    answer, answer_type, shown = definition_answer(question, CONTRACT)
    assert (answer, answer_type) == (meaning, "span")
    assert meaning in shown[0][1]


def test_a_definition_that_points_elsewhere_is_followed_and_shown_beside_it():
    answer, _, shown = definition_answer("What does “Term” mean?", CONTRACT)
    assert answer == "the period beginning on the Effective Date and ending on June 30, 2023"
    assert [segment for segment, _ in shown] == ["s4", "s1"]
    assert shown[1][1] == "“Term” has the meaning given in Section 9."


def test_a_patent_s_glossary():
    assert definition_answer("What does “coupled” mean?", PATENT)[0] == (
        "to join one element to another, directly or through intermediate parts"
    )
    assert definition_answer("What is meant by a fibrate drug?", PATENT)[0] == (
        "the class of drugs derived from fibric acid"
    )
    assert definition_answer("What does the term antisense refer to?", PATENT)[0] == (
        "nucleotide sequences complementary to a specific DNA or RNA sequence"
    )


def test_a_term_used_but_never_defined_is_left_to_the_search():
    assert definitions(PATENT, "brackets") == []
    assert definition_answer("What does “rail” mean?", PATENT) is None
    assert definition_answer("What is the Purchase Price?", CONTRACT) is None
    # "the best-known case as to the meaning of ‘goodwill’" names a case, it does not define the term
    cited = "32. The best-known case as to the meaning of ‘goodwill’ is IRC v Muller [1901] AC 217."
    assert definitions([Passage("j:0", "j", cited, "REASONING", None, None, None)], "goodwill") == []


@given(st.text(max_size=200))
def test_any_question_or_text_reads_without_error(text):
    term = asked_term(text)
    assert term is None or term.strip() == term
    found = definition_answer(f"What does “{text[:30]}” mean?", _document(text))
    assert found is None or found[1] == "span"


def test_a_shared_contract_s_definitions_list():
    pdf = next((SHARED_DATA / "en/contracts/pdf").glob("PenntexMidstream*.pdf"))
    doc = parse_file(pdf)
    passages = [Passage(f"b{i}", "d", b.text, b.type.value) for i, b in enumerate(doc.blocks)]
    answer, _, shown = definition_answer(
        "What does “Mcf” mean in the gas transportation agreement?", passages
    )
    assert answer == "one thousand cubic feet of Gas at standard base conditions of 60°F and 14.73 psia"
    assert shown[0][1].startswith("“Mcf” shall mean")
    answer, _, _ = definition_answer(
        "What is the Effective Date of the gas transportation agreement?", passages
    )
    assert answer == "the 14th day of April, 2015"


def test_a_shared_patent_s_glossary():
    path = SHARED_DATA / "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        record = next(json.loads(line) for line in f if '"doc_number": "07315680"' in line)
    paragraphs = [p for section in record["description_sections"] for p in section["paragraphs"]]
    answer, _, _ = definition_answer(
        "How is a “fitting” defined in the cable trough patent?", _document(*paragraphs)
    )
    assert answer.startswith("a component of a trough system that is curved in a longitudinal direction")


GLOSSARY = _document(
    "The Corporation shall pay a cash fee (the “Agents’ Fee”) equal to 7% of the proceeds.",
    "Each fund is registered under the Investment Company Act of 1940, as amended (the “1940 Act”).",
    "Turbine blades (also known as “buckets”) are cooled. The nickel alloys known in the art as "
    "“superalloys” resist the heat.",
    "The terms “patient” and “subject” are synonymous and mean all animals including humans.",
    "The term “tab width” is synonymous with “die swell.” The swell predicts bottle quality.",
    "Users of proximity communication devices (“PCDs”) call each other. Each proximity communication device "
    "(“PCD”) has a radio.",
)


@pytest.mark.parametrize(
    ("question", "meaning"),
    [
        ("How is the Agents’ Fee defined?", "a cash fee"),
        ("What does the “1940 Act” refer to?", "the Investment Company Act of 1940, as amended"),
        ("What are “buckets”?", "Turbine blades"),
        ("What are “superalloys”?", "The nickel alloys"),
        ("How is “subject” defined?", "all animals including humans"),
        ("What does “tab width” mean?", "“die swell.”"),
        # an acronym names the words whose initials it spells
        ("What is a PCD?", "proximity communication device"),
        ("Who is the “PCDs”?", "proximity communication devices"),
    ],
)
def test_definitions_in_other_shapes(question, meaning):
    assert definition_answer(question, GLOSSARY)[0] == meaning


@pytest.mark.parametrize(
    ("before", "term", "named"),
    [
        (
            "the trustees were to implement full indexation of the guaranteed minimum pension",
            "GMP",
            "the guaranteed minimum pension",
        ),
        (
            "shares may be sold by dealers registered with the Securities and Exchange Commission",
            "SEC",
            "the Securities and Exchange Commission",
        ),
        (
            "the Court must apply the European Union (Withdrawal) Act 2018",
            "EUWA",
            "the European Union (Withdrawal) Act 2018",
        ),
        ("the Financial Industry Regulatory Authority", "FINRA", None),  # not its initials
        ("the parties to this Agreement", "Agreement", None),  # no acronym
    ],
)
def test_the_words_an_acronym_spells(before, term, named):
    assert spelled_out(before, term) == named
