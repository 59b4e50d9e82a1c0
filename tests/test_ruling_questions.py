"""Whether a court granted what was asked, read from the ruling's items (retrieval/ruling_questions.py).
The rulings below are made up in the forms of the shared 裁判文书."""

from __future__ import annotations

import pytest

from retrieval.hybrid import Passage
from retrieval.ruling_questions import asked_ruling, ruling_answer
from retrieval.ruling_questions_en import asked_outcome


def ruling(*texts: str) -> list[Passage]:
    facts = Passage("d:0", "d", "原告请求判令被告支付货款。被告辩称已经付清。", "CLAIMS")
    return [facts, *(Passage(f"d:{i}", "d", t, "VERDICT") for i, t in enumerate(texts, 1))]


PARTLY = ruling(
    "一、被告甲公司于本判决生效之日起十日内支付原告乙货款5000元；二、驳回原告乙的其他诉讼请求。",
    "如果未按本判决指定的期间履行给付金钱义务，应当加倍支付迟延履行期间的债务利息。案件受理费50元，由被告负担。",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("法院是否支持了再审申请？", ("支持", "retrial")),
        ("二审是否驳回了上诉人的上诉？", ("驳回", "appeal")),
        ("法院是否准许原告撤回起诉？", ("准许", "withdrawal")),
        ("原告的诉讼请求是否得到法院支持？", ("支持", "claims")),
        ("二审法院是否维持了一审判决？", ("维持", "judgment")),
        ("被告是否支付了货款？", None),  # a question of fact, for the yes-no decider
        ("被告人是否有自首情节？", None),
    ],
)
def test_the_question_says_its_verb_and_what_it_asks_about(question, asked):
    assert asked_ruling(question) == asked


def test_a_rejected_application_is_no_and_its_rejection_yes():
    passages = ruling("驳回丙的再审申请。")
    no = ruling_answer("法院是否支持丙的再审申请？", passages)
    assert (no.answer, no.answer_type, no.units) == ("NO", "no", [("d:1", "驳回丙的再审申请。")])
    assert ruling_answer("法院是否驳回了再审申请？", passages).answer == "YES"


def test_claims_granted_in_part_are_partly_supported_and_the_boilerplate_is_no_grant():
    found = ruling_answer("法院是否支持原告乙的诉讼请求？", PARTLY)
    assert found.answer == "部分支持" and found.units[0] == ("d:1", "二、驳回原告乙的其他诉讼请求。")
    assert ruling_answer("法院是否驳回了原告的诉讼请求？", PARTLY).answer == "部分驳回"
    only_costs = ruling(
        "驳回原告乙的诉讼请求。", "案件受理费50元，由原告负担，加倍支付迟延履行期间的债务利息。"
    )
    assert ruling_answer("法院是否支持原告的诉讼请求？", only_costs).answer == "NO"


def test_an_order_against_the_claimant_grants_the_other_side_not_the_claimant():
    passages = ruling(
        "一、驳回原告丁公司的诉讼请求；二、原告丁公司应于本判决生效之日起三日内支付被告戊工资800元。"
    )
    assert ruling_answer("法院是否支持原告丁公司的诉讼请求？", passages).answer == "NO"


def test_appeals_withdrawals_and_the_judgment_below():
    upheld = ruling("驳回上诉，维持原判。")
    assert ruling_answer("二审法院是否支持上诉人的上诉请求？", upheld).answer == "NO"
    assert ruling_answer("二审是否维持原判？", upheld).answer == "YES"
    assert ruling_answer("二审是否改判？", upheld).answer == "NO"
    changed = ruling("一、维持某区人民法院民事判决第一项；二、撤销某区人民法院民事判决第二项。")
    assert ruling_answer("二审法院是否维持了一审判决？", changed).answer == "部分维持"
    assert ruling_answer("法院是否准许原告撤诉？", ruling("准许原告己撤回起诉。")).answer == "YES"


def test_a_ruling_that_does_not_decide_the_question_leaves_it_to_the_reader():
    assert ruling_answer("法院是否支持原告的诉讼请求？", ruling("本案中止诉讼。")) is None
    assert ruling_answer("法院是否支持原告的诉讼请求？", ruling("驳回原告的其他诉讼请求。")) is None
    assert ruling_answer("法院是否支持原告的诉讼请求？", ruling()[:1]) is None  # no ruling at all


def disposition(*texts: str, block_type: str = "VERDICT") -> list[Passage]:
    body = Passage(
        "e:0", "e", "The district court granted summary judgment. On appeal we reversed once.", "OPINION"
    )
    return [body, *(Passage(f"e:{i}", "e", t, block_type) for i, t in enumerate(texts, 1))]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("Did the Ninth Circuit reverse the grant of summary judgment?", ("judgment", 1)),
        (
            "Was the district court's grant of summary judgment affirmed?",
            ("judgment", -1),
        ),  # passive: the last
        ("Was the appeal allowed?", ("judgment", 1)),
        ("Did the court grant the motion to compel?", ("request", 1)),
        ("Was the complaint dismissed?", ("request", -1)),
        ("Was the case remanded?", ("remand", 1)),
        ("What did the court decide?", None),
        ("Did the defendant sign the lease?", None),
        ("In Mortimer v. Baca, did the Ninth Circuit reverse?", ("judgment", 1)),  # naming its case first
        ("In Grant v. Smith, was the appeal dismissed?", ("judgment", -1)),  # not the case's "Grant"
        ("In what year was the appeal dismissed?", None),
        ("Did the appeal succeed?", ("judgment", 1)),
        ("Was the appellant unsuccessful?", ("judgment", -1)),
        ("Did the appeal fail?", ("judgment", -1)),
        ("Did Smith win his appeal?", ("judgment", 1)),  # the fate before the appeal
        # the main verb, not a word of what the appeal was about
        ("Did Primus succeed in its appeal on the lost goodwill exclusion?", ("judgment", 1)),
        ("Did the appellant's failure to disclose matter?", None),
        ("Did the appeal succeed on ground 2?", None),  # one ground's fate is not the appeal's
        ("Why did the appeal fail?", None),
    ],
)
def test_an_english_question_says_the_axis_and_outcome_it_asks_about(question, asked):
    assert asked_outcome(question) == asked


def test_an_english_disposition_answers_on_its_axis_only():
    affirmed = disposition("For these reasons, the judgment of the district court is AFFIRMED.")
    assert ruling_answer("Did the court of appeals reverse the judgment?", affirmed).answer == "NO"
    assert ruling_answer("Was the judgment affirmed?", affirmed).answer == "YES"
    assert ruling_answer("Was the case remanded?", affirmed).answer == "NO"  # affirmed: nothing sent back
    # an affirmance does not say whether the court below granted the motion: left to the reader
    assert ruling_answer("Did the court grant the motion to dismiss?", affirmed) is None
    bare = disposition("AFFIRMED.")
    assert ruling_answer("Did the Sixth Circuit affirm?", bare).units == [("e:1", "AFFIRMED.")]


def test_allowing_dismissing_denying_and_in_part():
    allowed = disposition("92. For the reasons set out above we allow the appeal.")
    assert ruling_answer("Did the Court of Appeal dismiss the appeal?", allowed).answer == "NO"
    ordered = disposition(
        "IT IS ORDERED: 1. The employee's requested relief is denied.", block_type="OPINION"
    )
    assert ruling_answer("Did the court grant the employee's request?", ordered).answer == "NO"
    unable = disposition("The Court is unable to grant the requested benefits, and they are not granted.")
    assert ruling_answer("Was the request granted?", unable).answer == "NO"
    mixed = disposition("The judgment is affirmed in part and reversed in part.")
    assert ruling_answer("Was the judgment reversed?", mixed).answer == "In part"


def test_an_appeal_disposed_of_among_the_opinions_blocks():
    judgment = [
        Passage("u:0", "u", "1. This is an appeal against an order of HHJ Smith.", "OPINION"),
        Passage("u:1", "u", "2. In Jones v Brown the appeal was allowed.", "OPINION"),
        Passage("u:2", "u", "3. In my judgment the judge was entitled to find as he did.", "OPINION"),
        Passage("u:3", "u", "4. For these reasons, I would propose to dismiss this appeal.", "OPINION"),
        Passage("u:4", "u", "5. I agree.", "OPINION"),
    ]
    # no VERDICT block: the lead judgment's own disposition, not an appeal in a case it cites
    found = ruling_answer("Was the appeal allowed?", judgment)
    assert found.answer == "NO" and found.units == [("u:3", judgment[3].text)]
    assert ruling_answer("Did the court dismiss the appeal?", judgment).answer == "YES"
    assert ruling_answer("Was the appeal allowed?", judgment[:2]) is None


def test_an_argument_is_answered_by_the_courts_sentence_weighing_it():
    passages = [
        Passage("c:0", "c", "辩护人提出被告人系从犯，指控的盗窃罪不能成立。", "DEFENSE"),
        Passage(
            "c:1",
            "c",
            "被告人归案后如实供述，辩护人关于坦白的意见成立，本院予以采纳。"
            "被告人在共同犯罪中起主要作用，系主犯，辩护人关于从犯的意见本院不予采纳。",
            "OPINION",
        ),
        Passage("c:2", "c", "被告人犯盗窃罪，判处有期徒刑一年。", "VERDICT"),
    ]
    no = ruling_answer("法院是否采纳了辩护人关于从犯的意见？", passages)
    assert (no.answer, no.units) == (
        "NO",
        [("c:1", "被告人在共同犯罪中起主要作用，系主犯，辩护人关于从犯的意见本院不予采纳。")],
    )
    assert ruling_answer("法院是否采纳辩护人关于坦白的意见？", passages).answer == "YES"
    # an argument the court's sentences do not weigh is left to the reader, not answered from another
    assert ruling_answer("法院是否采纳辩护人关于自首的意见？", passages) is None
