"""The standard of review an American appellate court applied, read from the sentences that state it."""

from __future__ import annotations

import pytest

from pipeline.parsing import parse_file
from retrieval.hybrid import Passage
from retrieval.review_questions import asks_review, review_answer, standards_stated

US = "en/judgments/us_opinions_fastcase_xml"


def _opinion(*paragraphs: str) -> list[Passage]:
    return [Passage(f"s{i}", "d", text, "OPINION") for i, text in enumerate(paragraphs)]


OPINION = _opinion(
    "Plaintiffs argue that the trial court's ruling is reviewed deferentially rather than de novo.",
    "A finding of fact is clearly erroneous when the reviewing court is left with a firm conviction that "
    "a mistake has been made. If our review were de novo, we would reach the same result.",
    "II. STANDARD OF REVIEW",
    "We review a trial court's findings of fact for clear error. This Court reviews de novo the grant or "
    "denial of a motion for summary disposition. The admission of evidence will not be reversed absent an "
    "abuse of discretion.",
    "In attorney discipline, this Court reviews for clear error a hearing judge's findings of fact, and "
    "reviews without deference the hearing judge's conclusions of law.",
    "We can find no clear error in that finding. We review a district court's dismissal for failure to "
    "state a claim de novo.",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What is the standard of review?", True),
        ("What standard of review applies to the grant of summary judgment?", True),
        ("What standard applies to review of the discovery order?", True),
        ("How does the court review the decision on the motion to dismiss?", True),
        ("Under what standard did the Ninth Circuit review the sentence?", True),
        ("Why did the court affirm?", False),
        ("What did the court review?", False),
    ],
)
def test_what_a_question_asks(question, asked):
    assert asks_review(question) is asked


def test_only_the_court_s_own_statements_count():
    stated = [s for _, s, _ in standards_stated(OPINION)]
    assert stated == [
        "We review a trial court's findings of fact for clear error.",
        "This Court reviews de novo the grant or denial of a motion for summary disposition.",
        "The admission of evidence will not be reversed absent an abuse of discretion.",
        "In attorney discipline, this Court reviews for clear error a hearing judge's findings of fact, and "
        "reviews without deference the hearing judge's conclusions of law.",
        "We review a district court's dismissal for failure to state a claim de novo.",
    ]
    assert [heading for _, _, heading in standards_stated(OPINION)] == [True] * 5


@pytest.mark.parametrize(
    ("question", "standard", "sentence"),
    [
        ("What standard of review applies to the findings of fact?", "clear error", "findings of fact"),
        ("What is the standard of review for the summary disposition?", "de novo", "summary disposition"),
        ("What standard applies to the admission of evidence?", "abuse of discretion", "admission"),
        ("What standard of review applies to the dismissal?", "de novo", "failure to state a claim"),
        ("What is the standard of review?", "clear error", "findings of fact"),  # the first stated
        ("What standard applies to conclusions of law?", "without deference", "conclusions of law"),
        ("What standard applies to the hearing judge's findings?", "clear error", "conclusions of law"),
        ("What standard applies in attorney discipline?", "clear error; without deference", "conclusions"),
    ],
)
def test_the_standard_of_what_the_question_names(question, standard, sentence):
    found = review_answer(question, OPINION)
    assert found[0] == standard and sentence in found[2][0][1]


def test_an_opinion_that_states_no_standard():
    assert review_answer("What is the standard of review?", OPINION[:2]) is None


def test_real_opinions(shared_data):
    path = shared_data / US / "NW2d/761/761NW2d645_1.xml"
    passages = [Passage(f"s{i}", "d", b.text, b.type.value) for i, b in enumerate(parse_file(path).blocks)]
    found = review_answer(
        "What is the standard of review for whether the complaint states a claim?", passages
    )
    assert found[0] == "de novo" and "states a claim for relief presents a question of law" in found[2][0][1]
    path = shared_data / US / "A3d/100/100a3d1076_Replace2.xml"
    passages = [Passage(f"s{i}", "d", b.text, b.type.value) for i, b in enumerate(parse_file(path).blocks)]
    assert review_answer("What standard of review applies to the motion to suppress?", passages)[0] == (
        "clear error; de novo"  # findings of fact for clear error, conclusions of law de novo
    )
