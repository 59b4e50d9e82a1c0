"""Whether a ground of appeal succeeded, read from where the Court of Appeal concludes on it."""

from __future__ import annotations

import pytest

from pipeline.parsing import parse_file
from retrieval.ground_outcomes import _listed, asks_ground_outcome, ground_outcome
from retrieval.hybrid import Passage

EWCA = "en/judgments/uk_ewca_2020_xml"


def _judgment(*paragraphs: str) -> list[Passage]:
    return [Passage(f"s{i}", "d", text, "OPINION") for i, text in enumerate(paragraphs)]


JUDGMENT = _judgment(
    "Ground 1: The judge erred in finding that the order was disproportionate. "
    "Ground 4 asserts that the judge failed properly to distinguish the two orders.",
    "The judge concluded that ground 2 failed. Mr Smith QC contended that Ground 3 must fail.",
    "If Ground 5 succeeded, the findings would be unsafe.",
    "For those reasons, Ground 2 succeeds. I would reject Ground 3.",
    "We therefore refuse permission to appeal on Ground 5 and we dismiss the appeal on Ground 4; "
    "but we allow the appeal on Grounds 1 and 6.",
    "I would, therefore, decline to allow the appeal on Ground 7.",
    "It follows that I would dismiss the appeal on Grounds 8 to 9 and allow it on Ground 10.",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Did ground 2 succeed?", "2"),
        ("Was the appeal allowed on ground 3?", "3"),
        ("Was ground 4(a) upheld?", "4(a)"),
        ("Did ground two fail?", "2"),
        ("What were the grounds of appeal?", None),
        ("What is ground 2 about?", None),
    ],
)
def test_what_a_question_asks(question, asked):
    assert asks_ground_outcome(question) == asked


def test_a_list_of_grounds():
    assert _listed("1, 3 and 5") == ["1", "3", "5"]
    assert _listed("1 – 4") == ["1", "2", "3", "4"]
    assert _listed("4(b) and 5") == ["4(b)", "5"]


@pytest.mark.parametrize(
    ("ground", "answer", "sentence"),
    [
        ("1", "YES", "we allow the appeal on Grounds 1 and 6"),  # not the ground as stated
        ("2", "YES", "Ground 2 succeeds"),  # not the judge below's conclusion
        ("3", "NO", "I would reject Ground 3"),  # not counsel's contention
        ("4", "NO", "dismiss the appeal on Ground 4"),  # the outcome nearest the ground
        ("5", "NO", "refuse permission to appeal on Ground 5"),  # not a supposition
        ("6", "YES", "allow the appeal on Grounds 1 and 6"),
        ("7", "NO", "decline to allow the appeal on Ground 7"),
        ("9", "NO", "dismiss the appeal on Grounds 8 to 9"),
        ("10", "YES", "allow it on Ground 10"),
    ],
)
def test_the_court_s_conclusion_on_each_ground(ground, answer, sentence):
    found = ground_outcome(f"Did ground {ground} succeed?", JUDGMENT)
    assert found[0] == answer and sentence in found[2][0][1]


def test_a_ground_the_court_does_not_conclude_on():
    assert ground_outcome("Did ground 11 succeed?", JUDGMENT) is None
    assert ground_outcome("Did ground 5 succeed?", JUDGMENT[:3]) is None  # only supposed


def test_real_judgment(shared_data):
    path = shared_data / EWCA / "2020-ewca-758-civ.xml.gz"
    passages = [Passage(f"s{i}", "d", b.text, b.type.value) for i, b in enumerate(parse_file(path).blocks)]
    assert ground_outcome("Did ground 1 succeed?", passages)[0] == "YES"
    assert ground_outcome("Did ground 3 succeed?", passages)[0] == "NO"
