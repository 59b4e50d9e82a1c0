"""An appeal's grounds, read from where the judgment states them."""

from __future__ import annotations

import pytest

from retrieval.grounds_questions import asks_grounds, grounds
from tests.opinion_passages import ewca, written


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What are the grounds of appeal?", True),
        ("What were the grounds for the appeal?", True),
        ("On what grounds was the appeal brought?", True),
        ("What grounds of appeal were advanced?", True),
        ("On what grounds did the appellant appeal?", True),
        ("Why did the claimant appeal?", True),
        ("What is this appeal about?", False),
        ("Why was the appeal dismissed?", False),
        ("On what ground did the court refuse the injunction?", False),
    ],
)
def test_which_questions_ask_for_the_grounds_of_appeal(question, asked):
    assert asks_grounds(question) is asked


def _said(text: str) -> list[str]:
    return [sentence for _, sentence in grounds(written(text))]


def test_an_introduction_comes_with_the_list_it_introduces():
    said = _said(
        "11. The appellant appealed to the Upper Tribunal on five grounds, of which three matter now.\n"
        "22. The two grounds of appeal are:\n"
        "(1) That the judge erred in finding that there was an error of law;\n"
        "(2) That the judge disregarded the duty owed to service people.\n"
        "23. On behalf of the appellant Mr Karnik submitted that the first ground was made out."
    )
    # the appeal below's grounds are not this appeal's, and the list ends where the next paragraph starts
    assert said == [
        "22. The two grounds of appeal are:",
        "(1) That the judge erred in finding that there was an error of law;",
        "(2) That the judge disregarded the duty owed to service people.",
    ]


def test_items_numbered_like_paragraphs_and_quoted_items():
    said = _said(
        "37. The local authority advanced four amended grounds of appeal, which I distil in this way:\n"
        "1. Bruising: the judge did not apply an objective test.\n"
        "2. Section 40: the judge applied the wrong test.\n"
        "38. The local authority did not pursue a further ground.\n"
        "3. A list item of some later paragraph."
    )
    assert [s[:3] for s in said] == ["37.", "1. ", "2. "]
    quoted = _said(
        "21. AO now appeals. The grounds of appeal are that:\n"
        "“1. The judge adopted the wrong standard of review.\n"
        "2. The judge reversed the burden of proof.”\n"
        "22. Mr Cook for AO says more."
    )
    assert quoted[1:] == [
        "“1. The judge adopted the wrong standard of review.",
        "2. The judge reversed the burden of proof.”",
    ]


def test_grounds_stated_one_by_one_and_an_enumeration_within_a_paragraph():
    said = _said(
        "7. The claimants applied for committal on four grounds. The third ground was that he lied.\n"
        "18. Mr Hussain’s first ground of appeal is that the court had no power to imprison him. "
        "Mr Hussain’s second ground is that a coercive term cannot be imposed.\n"
        "54. So far as the first ground of appeal is concerned, I agree."
    )
    # those naming the appeal first; one saying how far it goes is no statement
    assert said[0].startswith("18. Mr Hussain’s first ground of appeal")
    assert not any(s.startswith("54.") for s in said)
    enumerated = _said(
        "5. GT’s appeal proceeds on three grounds. First, it says the losses were outside the duty. "
        "If it succeeds, the award falls. Second, the judge erred on loss of a chance. Third, credit was due."
    )
    assert [s.split(",")[0] for s in enumerated] == [
        "5. GT’s appeal proceeds on three grounds.",
        "First",
        "Second",
        "Third",
    ]


def test_the_first_statement_decides_and_headings_or_quotations_state_nothing():
    said = _said(
        "GROUND 2: ANXIOUS SCRUTINY 240-246\n"
        "“20. Ground 4 contends that the tribunal erred on relocation.\n"
        "5. Ping now appeals. The principal ground of appeal is that the CAT erred in law. "
        "Its secondary ground of appeal is that the penalty was too high.\n"
        "1. Background\n"
        "44. Although there are two grounds of appeal, the submissions were not made separately."
    )
    # a ground stated before any sentence counting them: the grounds stated, not the later count or a heading
    assert said == [
        "The principal ground of appeal is that the CAT erred in law.",
        "Its secondary ground of appeal is that the penalty was too high.",
    ]
    permitted = _said(
        "4. The sole ground of appeal on which I gave permission to appeal, as formulated by me in the order "
        "giving permission, was that the judge should have adjourned.\n"
        "56. Counsel submitted that the only formal ground of appeal was unsustainable."
    )
    assert len(permitted) == 1 and permitted[0].startswith("4. The sole ground of appeal")
    # an introduction that announces no list is not followed into paragraphs numbered like a list's items
    assert _said("7. There are three grounds of appeal.\n1. Background\n2. The facts") == [
        "7. There are three grounds of appeal."
    ]


def test_a_count_with_nothing_after_it_gives_way_to_the_statement_that_has_the_grounds():
    said = _said(
        "4. On 15 April 2019 Lewison LJ granted permission to appeal to this Court on one ground only.\n"
        "5. The facts are these.\n"
        "24. The appellant originally sought permission to appeal on four Grounds. They were:\n"
        "a) Ground 1: The judge erred in concluding that the fraud was relevant;\n"
        "b) Ground 2: The fraud could have been raised in the adjudication.\n"
        "25. Permission on Grounds 1 and 2 was refused."
    )
    assert [s[:6] for s in said] == ["24. Th", "a) Gro", "b) Gro", "4. On "]


def test_no_statement_no_grounds():
    assert _said("1. The facts are these.\n2. Permission to appeal was not sought on Ground 1.") == []


@pytest.mark.parametrize(
    ("number", "first", "shown"),
    [
        (1683, "17. There are three grounds of appeal.", 4),  # each ground opens a paragraph of its own
        (1516, "20. On behalf of the appellants Mr Horne advances the following three grounds of appeal:", 4),
        (12, "This sets out 5 Grounds.", 6),  # "a) Ground 1: … was" / "disproportionate;" / "b) …"
    ],
)
def test_a_court_of_appeal_judgment_states_its_grounds(shared_data, number, first, shown):
    said = grounds(ewca(shared_data, number))
    assert said[0][1].startswith(first) and len(said) == shown
