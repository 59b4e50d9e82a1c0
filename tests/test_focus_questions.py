"""A Chinese civil judgment's focus of dispute (retrieval/focus_questions.py), read from where a court states
it: the judgment's own, the court below's, never a party's. Texts written for these tests, and one CLCR
record of the shared data."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.focus_questions import asks_focus, focus_answer
from tests.zh_records import clcr_passages, paragraphs

_judgment = partial(paragraphs, "OPINION")

JUDGMENT = _judgment(
    "上诉人甲公司上诉称：本案争议焦点在于合同是否已经解除。",
    "一审法院认为：本案系买卖合同纠纷。本案的争议焦点为：1、乙公司是否应支付货款？2、违约金如何计算？",
    "本院认为，本案系买卖合同纠纷。综合各方当事人的诉辩意见，本案二审争议焦点归纳为：一、合同是否有效；"
    "二、乙公司应否支付违约金。关于合同效力问题，本院认为合同有效。",
    "关于争议焦点一。双方对此并无异议。",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [("本案的争议焦点是什么？", True), ("二审争议的焦点问题有哪些？", True), ("本案的案由是什么？", False)],
)
def test_what_a_question_asks(question, asked):
    assert asks_focus(question) is asked


def test_the_judgment_s_own_focus_with_its_items():
    found = focus_answer("本案的争议焦点是什么？", JUDGMENT)
    assert found.answer == "一、合同是否有效；二、乙公司应否支付违约金"
    assert [s for _, s in found.units] == [
        "综合各方当事人的诉辩意见，本案二审争议焦点归纳为：一、合同是否有效；",
        "二、乙公司应否支付违约金。",
    ]


def test_the_court_below_s_focus_when_asked_and_never_a_party_s():
    assert (
        focus_answer("一审法院归纳的争议焦点是什么？", JUDGMENT).answer
        == "1、乙公司是否应支付货款？2、违约金如何计算？"
    )
    # with the court's own statement gone, the judgment's focus is the only court's stated, not the party's
    assert focus_answer("本案的争议焦点是什么？", JUDGMENT[:2]).answer.startswith("1、乙公司是否应支付货款")
    assert focus_answer("本案的争议焦点是什么？", JUDGMENT[:1]) is None


def test_a_focus_named_after_it_and_a_heading_that_states_none():
    named = _judgment("因此，火灾是否属于保险事故是本案的争议焦点。", "关于本案争议焦点，本院做如下评析：")
    assert focus_answer("本案的争议焦点是什么？", named).answer == "火灾是否属于保险事故"
    assert focus_answer("本案的争议焦点是什么？", named[1:]) is None


@given(st.text(alphabet="争议焦点为是：；？。1、一二本院认为一审法院", max_size=60))
def test_any_judgment_text_reads_without_error(text):
    found = focus_answer("本案的争议焦点是什么？", _judgment(text))
    assert found is None or found.answer_type == "sentence"


def test_a_shared_second_instance_judgment(shared_data, tmp_path):
    passages = clcr_passages(shared_data, tmp_path, "1f6231006ff8")
    found = focus_answer("二审的争议焦点有哪些？", passages)
    assert found.answer.startswith("一、聂朋荣因本案事故产生的各项赔偿的具体数额；二、彭利勇应否")
    assert found.answer.endswith("三、建安公司应否就彭利勇的赔偿责任承担连带责任")


def test_items_after_a_full_stop_questions_in_a_row_and_a_focus_that_names_the_first_instance():
    items = _judgment(
        "本院认为，本案的争议焦点主要为：1、协议的效力问题。2、欠款问题。3、违约金问题。一、关于协议的效力问题。"
    )
    assert (
        focus_answer("本案的争议焦点有哪些？", items).answer
        == "1、协议的效力问题。2、欠款问题。3、违约金问题"
    )
    questions = _judgment(
        "本院认为，本案的争议焦点是：决议是否成立？一审判决是否同案不同判？ 决议记载的内容有会议时间。"
    )
    assert (
        focus_answer("本案的争议焦点是什么？", questions).answer == "决议是否成立？一审判决是否同案不同判？"
    )
    named = _judgment(
        "本案一审的争议焦点为：1、本案是否应中止审理？2、分配是否符合法定条件？",
        "本案二审争议焦点是：分红应否支持。",
    )
    assert (
        focus_answer("本案一审的争议焦点是什么？", named).answer
        == "1、本案是否应中止审理？2、分配是否符合法定条件？"
    )
    assert focus_answer("本案二审的争议焦点是什么？", named).answer == "分红应否支持"
    two = _judgment(
        "一审法院认为，本案双方当事人争议的焦点主要包括两方面：（一）是否违约；（二）能否解除合同。"
    )
    assert (
        focus_answer("一审法院认为本案争议的焦点是什么？", two).answer == "（一）是否违约；（二）能否解除合同"
    )
