"""Why an appeal was allowed or dismissed, or a judgment below affirmed or reversed, read from where the
court concludes."""

from __future__ import annotations

import pytest

from retrieval.why_questions import asks_why, reasons
from tests.opinion_passages import ewca, parsed, written


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Why was the appeal dismissed?", True),
        ("Why was the appeal allowed?", True),
        ("Why did the appeal fail?", True),
        ("Why did the court allow the appeal?", True),
        ("What were the court's reasons for dismissing the appeal?", True),
        ("On what basis was the appeal dismissed?", True),
        ("Why was the claimant's application refused?", True),
        ("Was the appeal allowed?", False),
        ("What are the grounds of appeal?", False),
        ("Why did the court order the Local Authority to contribute to the costs?", False),
        ("Why was the detailed assessment of costs not ordered forthwith?", False),
        ("Why did the Ninth Circuit affirm the grant of summary judgment?", True),
        ("Why was the conviction affirmed?", True),
        ("Why was the order of the Appellate Division affirmed?", True),
        ("What were the court's reasons for reversing?", True),
        ("Why did the district court grant summary judgment?", False),
        ("Why did the trial court vacate the order?", False),
    ],
)
def test_which_questions_ask_why_an_appeal_ended_as_it_did(question, asked):
    assert asks_why(question) is asked


def test_the_conclusion_before_the_disposition_not_the_disposition_alone():
    judgment = written(
        "1. This is an appeal against an order of HHJ Smith.\n"
        "2. In Jones v Brown the appeal was allowed by this court.\n"
        "3. The facts are these.\n"
        "4. Counsel for the appellant submitted that the judge should have adjourned.\n"
        "5. The judge addressed the first point. He was plainly aware of the second.\n"
        "6. Accordingly, in my judgment, the judge was entitled to find that the notice was valid.\n"
        "7. For the reasons given above, I would dismiss this appeal.\n"
        "8. I agree."
    )
    said = [sentence for _, sentence in reasons(judgment)]
    # the appeal allowed in a case cited early on is no disposition of this one
    assert said[0].startswith("6. Accordingly, in my judgment, the judge was entitled")
    assert not any(s.startswith("7.") for s in said)


def test_a_disposition_that_gives_its_reason():
    judgment = written(
        "1. The background.\n2. More background.\n3. The submissions.\n"
        "4. I have arrived at the regrettable conclusion that the appeal must be allowed on grounds of "
        "procedural irregularity."
    )
    assert reasons(judgment)[0][1].startswith("4. I have arrived at the regrettable conclusion")


def test_orders_quotations_and_points_left_open_are_no_reasons():
    judgment = written(
        "1. The background.\n2. More background.\n"
        "3. “The judge was wrong in law to make the order,” the appellant wrote in its skeleton argument.\n"
        "4. It is therefore unnecessary to consider the respondent's notice or the cross-appeal at all.\n"
        "5. I would allow both appeals and hold that the landlord is entitled to summary judgment. "
        "I have concluded that there was no breach of the duty in either case."
    )
    said = [sentence for _, sentence in reasons(judgment)]
    # the reason after the disposition in its own paragraph; not the order it makes, a quotation or a point
    # left undecided
    assert said == ["I have concluded that there was no breach of the duty in either case."]


def test_no_disposition_no_reasons():
    judgment = written(
        "1. The facts.\n2. In my judgment the judge was right.\n"
        "3. I would not allow this appeal solely on delay."
    )
    assert reasons(judgment) == []


def test_a_court_of_appeal_judgment_concludes_before_it_disposes(shared_data):
    passages = ewca(shared_data, 1331)
    # the two sentences of the paragraph before "89. I would allow the appeal.", nearest first
    said = [sentence for _, sentence in reasons(passages)[:2]]
    assert said[0].startswith("The validation principle therefore applies")
    assert said[1].startswith("88. In my judgment, the interpretation adopted by the inspector is")


def test_an_american_opinion_gives_its_reason_where_it_opens_and_where_it_concludes():
    opinion = written(
        "Smith appeals the denial of his motion to suppress. Smith argues that the district court erred.\n"
        "Because the officers had probable cause to search the car, we affirm.\n"
        "I. Background. The stop took place at night.\n"
        "We will reverse a denial only if the error substantially prejudiced the defendant.\n"
        "We hold that the district court did not err in denying the motion to suppress.\n"
        "For the foregoing reasons, the judgment is AFFIRMED.\n"
        "JONES, Circuit Judge, dissenting. The search was unlawful, and I would reverse."
    )
    said = [sentence for _, sentence in reasons(opinion)]
    # a party's argument, a rule of review and a dissent's vote are none of the court's reasons
    assert said[:2] == [
        "Because the officers had probable cause to search the car, we affirm.",
        "We hold that the district court did not err in denying the motion to suppress.",
    ]
    assert not any("argues" in s or "dissenting" in s for s in said)


def test_an_american_appeal_court_concludes_before_it_affirms(shared_data):
    passages = parsed(shared_data / "en/judgments/us_opinions_pdf/circuit_6thCircuit-10a0023p-06.pdf")
    said = [sentence for _, sentence in reasons(passages)]
    assert said[0].startswith("Concluding that Balmert received a full and fair review of her claim")
    assert (
        "Therefore, Reliance Standard’s benefits determination was not arbitrary and capricious." in said[:3]
    )
