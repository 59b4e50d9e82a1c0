"""The appeal a Chinese judgment allows (retrieval/appeal_questions.py), read from its own notice after the
ruling, never from the history it reports. Texts written for these tests, and one CLCR record of the
shared data."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.appeal_questions import asked_notice, notice_answer
from tests.zh_records import clcr_passages, paragraphs

_judgment = partial(paragraphs, "VERDICT")


CIVIL = _judgment(
    "一审判决后，被告不服，提出上诉。该判决已发生法律效力。",
    "一、被告于本判决生效之日起十日内支付货款5000元。",
    "案件受理费50元，由被告负担 如不服本判决，可在判决书送达之日起十五日内，向本院递交上诉状，"
    "并按对方当事人的人数提出副本，上诉于浙江省湖州市中级人民法院。",
)
CRIMINAL = _judgment(
    "被告人张某犯盗窃罪，判处有期徒刑六个月。",
    "如不服本判决，可在接到判决书的第二日起十日内，通过本院或者直接向上海市第一中级人民法院提出上诉。"
    "书面上诉的，应当提交上诉状正本一份，副本二份。",
)
FINAL = _judgment("原审被告人霍某不服，提出上诉。", "驳回上诉，维持原判。", "本裁定为终审裁定。")
REVIEW = _judgment("查封被申请人的住宅。", "如不服本裁定，可以自收到裁定书之日起五日内向本院申请复议一次。")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("这份判决可以上诉吗？", ("can", "上诉")),
        ("本判决是否为终审判决？", ("final", "上诉")),
        ("上诉期限是多久？", ("term", "上诉")),
        ("当事人应在多少日内提起上诉？", ("term", "上诉")),
        ("被告人可以向哪个法院上诉？", ("court", "上诉")),
        ("如何提起上诉？", ("how", "上诉")),
        ("对该保全裁定能否申请复议？", ("can", "复议")),
        ("申请复议的期限是多久？", ("term", "复议")),
        ("二审法院是哪个法院？", ("appeal court", "上诉")),
        ("被告人在法定期限内是否上诉？", None),  # the history, not the notice
        ("原告为什么上诉？", None),
        ("本案的争议焦点是什么？", None),
    ],
)
def test_what_a_question_asks(question, asked):
    assert asked_notice(question) == asked


def test_a_civil_judgment_s_notice_and_not_the_history_it_reports():
    assert notice_answer("本案判决是否可以上诉？", CIVIL).answer == "YES"
    assert notice_answer("本判决是否为终审判决？", CIVIL).answer == "NO"
    assert notice_answer("上诉期限是多久？", CIVIL).answer == "判决书送达之日起十五日内"
    court = notice_answer("当事人不服可以向哪个法院上诉？", CIVIL)
    assert (court.answer, court.answer_type) == ("浙江省湖州市中级人民法院", "field")
    assert court.units[0][0] == "z:2"
    # of a first instance, the second instance's court is the one its notice names; of a final judgment,
    # its own, which the judgment's head states (the cover route answers)
    assert notice_answer("二审法院是哪个法院？", CIVIL).answer == "浙江省湖州市中级人民法院"
    assert notice_answer("二审法院是哪个法院？", FINAL) is None


def test_a_criminal_notice_its_court_and_its_written_appeal():
    assert notice_answer("被告人可以向哪个法院上诉？", CRIMINAL).answer == "上海市第一中级人民法院"
    assert notice_answer("上诉期是几天？", CRIMINAL).answer == "接到判决书的第二日起十日内"
    how = notice_answer("怎样提出上诉？", CRIMINAL)
    assert how.answer_type == "sentence"
    assert how.answer.endswith("副本二份")
    assert len(how.units) == 2


def test_a_final_ruling_allows_no_appeal_and_has_no_term():
    assert notice_answer("本裁定可以上诉吗？", FINAL).answer == "NO"
    assert notice_answer("本裁定是否为终审裁定？", FINAL).answer == "YES"
    term = notice_answer("上诉期限是多久？", FINAL)
    assert (term.answer, term.units[0][1]) == ("none", "本裁定为终审裁定。")
    effective = _judgment("终结执行。", "本裁定送达后即发生法律效力。")
    assert notice_answer("对该执行裁定可以上诉吗？", effective).answer == "NO"


def test_a_reconsideration_is_no_appeal():
    assert notice_answer("对该保全裁定能否申请复议？", REVIEW).answer == "YES"
    assert notice_answer("申请复议的期限是多久？", REVIEW).answer == "收到裁定书之日起五日内"
    assert notice_answer("能否上诉？", REVIEW).answer == "NO"
    higher = _judgment("如不服本裁定，可以自本裁定书送达之日起十日内，向广东省高级人民法院申请复议。")
    assert notice_answer("应向哪个法院申请复议？", higher).answer == "广东省高级人民法院"
    assert notice_answer("应向哪个法院申请复议？", REVIEW).answer == "none"  # handed in here, 向本院
    assert notice_answer("当事人能否对本裁定提起上诉？", FINAL).answer == "NO"
    # neither finality nor a notice stated: the route does not guess
    assert notice_answer("能否上诉？", _judgment("准许原告撤回起诉。")) is None
    assert notice_answer("本判决是否为终审判决？", FINAL[:2]) is None


@given(st.text(alphabet="如不服本判决裁定可在之日起十五日内向上诉于中级人民法院终审为。，；", max_size=80))
def test_any_judgment_text_reads_without_error(text):
    for question in ("可以上诉吗？", "上诉期限是多久？", "向哪个法院上诉？", "是否为终审判决？"):
        found = notice_answer(question, _judgment(text))
        assert found is None or found.answer_type in {"yes", "no", "field", "none", "sentence"}


def test_a_shared_second_instance_judgment(shared_data, tmp_path):
    passages = clcr_passages(shared_data, tmp_path, "1f6231006ff8")
    final = notice_answer("本判决是不是终审判决？", passages)
    assert (final.answer, final.units[0][1]) == ("YES", "本判决为终审判决。")
    assert notice_answer("当事人还能上诉吗？", passages).answer == "NO"
