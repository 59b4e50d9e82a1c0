"""What a judgment is about, read from where its opening says so."""

from __future__ import annotations

import pytest

from retrieval.about_questions import asks_about, subject
from tests.opinion_passages import ewca, written


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What is this appeal about?", True),
        ("What was the case about?", True),
        ("What issue does the appeal raise?", True),
        ("What is the central question in this appeal?", True),
        ("What were the issues before the court?", True),
        ("What does this appeal concern?", True),
        ("What did the court decide?", False),
        ("Why was the appeal dismissed?", False),
        ("What is the neutral citation?", False),
        ("What was the judge's decision about costs?", False),
    ],
)
def test_which_questions_ask_what_a_judgment_is_about(question, asked):
    assert asks_about(question) is asked


def test_the_issue_near_the_opening_comes_before_the_appeal_it_is_raised_in():
    opening = written(
        "1. The appellants appeal against the order of HHJ Hacon refusing to restrain the solicitors from "
        "acting. The appeal raises the issue whether a firm can be restrained from acting for a defendant.\n"
        "2. The second appellant is a company which designs and sells glassware.\n"
        "3. The background can be shortly stated.\n"
        "4. Nothing else is said here about the appeal at all.\n"
        "5. The first issue on the ground of appeal is whether the judge applied the right test."
    )
    said = [sentence for _, sentence in subject(opening)]
    raised = "The appeal raises the issue whether a firm can be restrained from acting for a defendant."
    assert said[0] == raised
    assert said[1].startswith("1. The appellants appeal against the order")
    # a later ground's issue is no stronger than what the opening said
    assert said[-1].startswith("5. The first issue")
    assert subject(written("1. The facts are these.\n2. The claimant was born in 1970.")) == []


def test_a_statute_quoted_in_the_opening_is_no_appeal():
    quoted = written(
        "(7) There is no right of appeal or review from the decision of the judge on the application."
    )
    assert subject(quoted) == []


@pytest.mark.parametrize(
    ("number", "starts"),
    [
        (578, "1. This appeal from an order of His Honour Judge Hodge QC"),
        (194, "1. This is an appeal against an order made in the Administrative Court"),
        (1707, "1. This appeal raises for the first time in this court an important issue of principle"),
    ],
)
def test_a_court_of_appeal_judgment_says_what_it_is_about(shared_data, number, starts):
    assert subject(ewca(shared_data, number))[0][1].startswith(starts)
