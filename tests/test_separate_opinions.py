"""Who dissented or concurred, and whether any judge dissented, read from an American opinion's separate
opinions and the votes it records."""

from __future__ import annotations

import pytest

from retrieval.separate_opinions import asked_separate, separate_answer, separate_opinions
from tests.opinion_passages import parsed, written

US = "en/judgments/us_opinions_fastcase_xml"


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Who dissented?", ("dissent", "who")),
        ("Which justice dissented?", ("dissent", "who")),
        ("Who wrote a concurring opinion?", ("concur", "who")),
        ("Was there a dissenting opinion?", ("dissent", "whether")),
        ("Did any judge dissent?", ("dissent", "whether")),
        ("Was the decision unanimous?", ("dissent", "unanimous")),
        ("What did the dissent argue?", None),
        ("Did the court affirm?", None),
    ],
)
def test_which_questions_ask_about_separate_opinions(question, asked):
    assert asked_separate(question) == asked


def test_headings_votes_and_joiners_not_citations_or_a_court_below():
    opinion = written(
        "The dissent argues that the rule does not apply. The dissenting opinion overlooks the statute. "
        "See Gant, 129 S. Ct. at 1724 (Scalia, J., "
        "concurring in judgment).\n"
        "Then-Judge Ervin dissented from the Court of Appeals majority.\n"
        "The order is affirmed. Chief Judge LIPPMAN concurs; Judge READ concurs in result in a separate "
        "opinion; Judge Graffeo dissents and votes to affirm in another opinion.\n"
        "ANN WALSH BRADLEY, J. (dissenting).\n"
        "¶ 79 I am authorized to state that Justice SHIRLEY S. ABRAHAMSON joins this dissent."
    )
    found = [(s.kind, s.judge) for s in separate_opinions(opinion)]
    assert found == [
        ("concur", "Read"),
        ("dissent", "Graffeo"),
        ("dissent", "Ann Walsh Bradley"),
        ("dissent", "Shirley S. Abrahamson"),
    ]
    assert separate_answer("Who dissented?", opinion)[:2] == (
        "Graffeo, Ann Walsh Bradley and Shirley S. Abrahamson",
        "span",
    )
    assert separate_answer("Was the decision unanimous?", opinion)[:2] == ("NO", "no")


def test_no_dissent_only_where_the_other_judges_are_recorded_joining():
    joined = written("The judgment is affirmed.\nBAKER, J., and BAILEY, J., concur.")
    assert separate_answer("Was there a dissent?", joined) == (
        "NO",
        "no",
        [("s1", "BAKER, J., and BAILEY, J., concur.")],
    )
    assert separate_answer("Who dissented?", joined)[0] == "No judge dissented."
    unanimous = written("SOTOMAYOR, J., delivered the opinion for a unanimous Court.\nWe affirm.")
    assert separate_answer("Was the decision unanimous?", unanimous)[:2] == ("YES", "yes")
    # an opinion that records neither says nothing either way
    assert separate_answer("Was there a dissent?", written("The judgment is affirmed.")) is None


def test_a_shared_opinion_with_a_concurrence_and_a_dissent(shared_data):
    passages = parsed(shared_data / US / "NE2d/945/945ne2d484.xml")
    assert separate_answer("Who dissented?", passages)[0] == "Graffeo"
    assert separate_answer("Who wrote a concurring opinion?", passages)[0] == "Read"
