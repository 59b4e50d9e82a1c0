"""What a question's form tells the reader: its parts when it asks for several things at once, and how the
answers to the parts make one answer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.reader.questions import (
    _JOIN,
    MIN_PART_CHARS,
    answer_types,
    asked_clauses,
    before_asked,
    question_parts,
)
from retrieval.reader.runtime import ReaderAnswer, joined


@pytest.mark.parametrize(
    "question, parts",
    [
        ("本案事故发生地点及鉴定结果？", ["本案事故发生地点", "鉴定结果"]),
        (
            "王x14家中毒品的重量及其将枪弹、毒品交到了哪里？",
            ["王x14家中毒品的重量", "将枪弹、毒品交到了哪里"],
        ),
        (
            "原、被告签订协议书的时间以及原告向被告缴纳的费用？",
            ["原、被告签订协议书的时间", "原告向被告缴纳的费用"],
        ),
        ("借款的金额、利率并且约定的还款期限是什么？", ["借款的金额、利率", "约定的还款期限是什么"]),
        ("被告未及时支付的金额是多少？", []),  # 及时 joins nothing
        ("本案涉及的金额是多少？", []),  # nor does 涉及
        ("被告是否及时付款及赔偿损失？", []),  # a yes-no question is answered once
        ("被告人周明远的辩护人是谁？", []),
        ("及鉴定结果？", []),  # one part alone is no split
    ],
)
def test_a_question_asking_two_things_is_asked_in_parts(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question, clauses",
    [
        ("本案的审判长是谁，案号是多少？", ["本案的审判长是谁", "案号是多少"]),
        (
            "杨晴告的是哪个单位？第三人又是谁？",
            ["杨晴告的是哪个单位", "第三人又是谁"],
        ),  # two questions in one line
        ("林某花了多少钱、买了多少张假币？", ["林某花了多少钱", "买了多少张假币"]),
        ("持有、使用假币罪判了几年？", []),  # 、 lists things; only one clause asks
        # a list inside a clause that asks stays whole
        (
            "本案受理费是多少？加上保全费、公告费一共多少钱？",
            ["本案受理费是多少", "加上保全费、公告费一共多少钱"],
        ),
        ("Who appealed, and when?", []),  # "when" has no verb to borrow
    ],
)
def test_the_clauses_of_a_chinese_question_that_each_ask_something(question, clauses):
    assert asked_clauses(question) == clauses


@pytest.mark.parametrize(
    "question, clauses",
    [
        (
            "When did W80 fire the fatal shot, and who was killed?",
            ["When did W80 fire the fatal shot?", "who was killed?"],
        ),
        (  # two questions sharing what follows them
            "Before which judge, and on what date, was the summons heard?",
            ["Before which judge was the summons heard?", "on what date was the summons heard?"],
        ),
        (
            "At what time and on what date was death fixed?",
            ["At what time was death fixed?", "on what date was death fixed?"],
        ),
        (  # a few words without a verb borrow the first clause's
            "During what period did JSC sell the Bundles, and through which online platform?",
            [
                "During what period did JSC sell the Bundles?",
                "through which online platform did JSC sell the Bundles?",
            ],
        ),
        ("Which two reservoirs make up the Sole Pit field?", []),
        ("Did the court give Z permission to appeal, and why?", []),  # one clause asks a thing
    ],
)
def test_the_clauses_of_an_english_question_each_whole(question, clauses):
    assert asked_clauses(question) == clauses


def test_what_a_clause_is_about_before_what_it_asks():
    assert before_asked("三个被告人答应赔于某多少钱") == "三个被告人答应赔于某"
    assert before_asked("王勇找毛民借的钱是分两笔给的吧") == "王勇找毛民借的钱是分两笔给的吧"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["被告", "的", "金额", "及", "以及", "及时", "涉及", "并且", "是否", "？", "、"]),
        max_size=12,
    )
)
def test_parts_are_pieces_of_the_question_without_their_joins(words):
    question = "".join(words)
    parts = question_parts(question)
    assert parts == [] or len(parts) >= 2
    if parts:
        assert answer_types(question) == frozenset({"SPAN", "NONE"})
    for p in parts:
        assert p in question and len(p) >= MIN_PART_CHARS and not _JOIN.search(p)


def _span(text: str, s: int, e: int, conf: float) -> ReaderAnswer:
    return ReaderAnswer("SPAN", text, conf, (s, e), conf + 0.1, (text, conf))


def test_answers_to_the_parts_make_one_answer_in_their_order():
    none = ReaderAnswer("NONE", "", 0.7, None, 0.7)
    one = joined([_span("441克", 10, 12, 0.5), none, _span("兰陵县公安局", 30, 33, 0.3)])
    assert (one.label, one.answer, one.parts) == ("SPAN", "441克，兰陵县公安局", ("441克", "兰陵县公安局"))
    assert one.span == (10, 33) and one.confidence == 0.3 and one.type_prob == pytest.approx(0.4)
    # a text said by two parts is said once; no part answered: the surest of the part answers
    assert joined([_span("城客办", 3, 4, 0.6), _span("城客办", 3, 4, 0.5)]).answer == "城客办"
    assert joined([none, ReaderAnswer("NONE", "", 0.9, None, 0.9)]).type_prob == 0.9
