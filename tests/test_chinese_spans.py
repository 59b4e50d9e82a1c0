"""Typed phrases in Chinese judgments (retrieval/chinese_spans.py): what a question asks for, the phrases of
that shape, and the search over passages that picks one (retrieval.english_spans.typed_span)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.answer import fits_question, question_kind
from retrieval.chinese_spans import ZH_KINDS, owner_bonus, zh_candidates, zh_span_kind
from retrieval.english_spans import span_kind, typed_span
from retrieval.sentence_rank import fits_kind


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("不服判决可以上诉到哪个法院？", "court"),
        ("二审法院是哪个法院？", "court"),
        ("一审法院何时作出判决？", "date"),
        ("交通事故发生在什么时间？", "date"),
        ("杨某海被判处有期徒刑多久？", "duration"),
        ("工期是多少天？", "duration"),
        ("上诉期限是多长？", "duration"),
        ("本案适用什么程序？", "procedure"),
        ("本案的案号是什么？", "case number"),
        ("本案的审判长是谁？", "office"),
        ("建安某公司的法定代表人是谁？", "office"),
        ("司法鉴定认定原告的损伤程度是什么？", "injury"),
        ("原告构成几级伤残？", "injury"),
        ("死者陈某甲去世时多大年纪？", "age"),
        ("为什么法院没有支持原告的诉请？", None),  # 为什么 is no 什么法院
        # left to the reader: a sum, a thing, a party (a name has no shape in Chinese text)
        ("被告应返还原告多少装修款？", None),
        ("原告与被告签订的是什么合同？", None),
        ("谁被惊醒后大喊“抓小偷”？", None),
    ],
)
def test_the_kind_a_chinese_question_asks_for(question, kind):
    assert zh_span_kind(question) == kind
    assert span_kind(question) == kind  # the question's script chooses the reading


def phrases(text: str, kind: str) -> list[str]:
    return [text[a:b] for a, b, _ in zh_candidates(text, kind)]


def test_the_phrases_of_each_shape():
    appeal = (
        "如不服本判决，可在接到判决书的第二日起十日内，通过本院或者直接向广东省湛江市中级人民法院提出上诉。"
    )
    assert phrases(appeal, "court") == ["广东省湛江市中级人民法院"]  # not 本院或者直接向广东省…
    assert phrases("不服内蒙古自治区包头市中级人民法院（2025）内02民终2251号民事判决", "court") == [
        "内蒙古自治区包头市中级人民法院"
    ]
    assert phrases("重庆市第五中级人民法院于2024年12月31日作出", "court") == ["重庆市第五中级人民法院"]
    # read back from 人民法院 over places: 发生法律效力 is no part of the name, 增 is (jieba cuts 增|城区)
    assert phrases("本院依据已经发生法律效力梅河口市人民法院", "court") == ["梅河口市人民法院"]
    assert phrases("广东省广州市增城区人民法院于2025年5月13日", "court") == ["广东省广州市增城区人民法院"]
    assert phrases("于2024年12月31日作出（2024）渝05民终11440号民事判决", "case number") == [
        "（2024）渝05民终11440号"
    ]
    assert phrases("二〇二二年十二月九日，2023年9月27日作出", "date") == [
        "二〇二二年十二月九日",
        "2023年9月27日",
    ]
    # a term or a period; not a date's month or day, nor a rate (每逾期一日)
    term = "约定工期自2021年10月20日起至2022年1月18日止，工期九十日，每逾期一日按千分之一支付违约金"
    assert phrases(term, "duration") == ["九十日"]
    # a prison term with its penalty
    assert phrases("判处有期徒刑一年六个月，缓刑二年", "duration") == ["有期徒刑一年六个月", "二年"]
    # an office's holder, however the signature lines space it out
    assert phrases("审　判　长　　杨方宁", "office") == ["杨方宁"]
    assert phrases("委托诉讼代理人：张宇，北京市盈科（包头）律师事务所律师。", "office") == ["张宇"]
    assert phrases("由审判员张晓红独任审判，", "office") == []  # running text: the reader's
    # two holders of one office, listed with 、; a party's role word after 、 is no holder's name
    assert phrases("辩护人卢晓、李惠惠，浙江嘉瑞成律师事务所律师。", "office") == ["卢晓、李惠惠"]
    assert phrases("辩护人张三、被告人李四", "office") == ["张三"]
    # the grade of an injury or a disability as a forensic report words it
    report = "被鉴定人王淑珍胸12椎体损伤构成轻微伤；另一人构成轻伤二级，经鉴定为十级伤残。"
    assert phrases(report, "injury") == ["轻微伤", "轻伤二级", "十级伤残"]
    assert phrases("经鉴定，原告陈某构成10级伤残。", "injury") == ["10级伤残"]
    # an age as a judgment states it, a child's with its months; not a year nor a term
    assert phrases("被害人陈某甲死亡时69周岁，其子陈某乙现年四十二岁。", "age") == ["69周岁", "四十二岁"]
    assert phrases("被告人生于1980年，其女1岁3个月，刑期3年", "age") == ["1岁3个月"]
    assert phrases("被告人周明远对指控无异议。\n其辩护人提出，被告人系初犯", "office") == []


@given(
    st.text(
        alphabet="年月日天个一二三四五十〇0123456789法院省市区人民中级审判长书记员：（）号，。 \n",
        max_size=60,
    )
)
def test_phrases_lie_in_the_text_in_order_and_never_overlap(text):
    for kind in ZH_KINDS:
        found = zh_candidates(text, kind)
        assert all(0 <= a < b <= len(text) for a, b, _ in found)
        assert all(b <= a2 for (_, b, _), (a2, _, _) in zip(found, found[1:], strict=False))
        if kind == "court":
            assert all(text[a:b].endswith("法院") for a, b, _ in found)
        if kind == "duration":
            assert all(text[a - 1 : a] not in ("年", "月") for a, _, _ in found)


def test_the_phrase_nearest_the_question_in_the_line_that_answers_it():
    passages = [
        ("d:1", "一审：山东省巨野县人民法院(2017)鲁1724刑初316号刑事判决（2017年12月22日）"),
        ("d:2", "二审：山东省菏泽市中级人民法院(2018)鲁17刑终75号刑事裁定（2018年5月16日）"),
        ("d:3", "审　判　长　　杨方宁\n书　记　员　　刘　诗"),
    ]
    court = typed_span("二审法院是哪个法院？", passages)
    assert (court.kind, court.text, court.segment_id) == ("court", "山东省菏泽市中级人民法院", "d:2")
    clerk = typed_span("本案的书记员是谁？", passages)  # the office's own line, not the presiding judge's
    assert clerk.text == "刘　诗" and clerk.unit == "书　记　员　　刘　诗"
    assert typed_span("被告应返还原告多少装修款？", passages) is None  # no kind: the reader answers
    # this case's number is the line under the title, not the prosecution's that its text cites
    numbers = [
        ("d:0", "刑 事 判 决 书\n（2013）新刑初字第181号"),
        ("d:5", "新县人民检察院以新检刑诉（2013）147号起诉书指控被告人程某，于2013年12月9日向本院提起公诉。"),
    ]
    assert typed_span("本案的案号是什么？", numbers).text == "（2013）新刑初字第181号"


def test_a_who_question_is_never_answered_by_a_bare_sum():
    assert not fits_question("案件受理费由谁负担？", "人民币2,450元", "VERDICT")
    assert fits_question("案件受理费由谁负担？", "原告李春华负担1,470元", "VERDICT")
    assert fits_question("被告应返还原告多少装修款？", "人民币30,400元", "VERDICT")


def test_an_agent_is_the_one_listed_under_the_party_the_question_names():
    parties = [
        ("d:3", "再审申请人（一审被告、二审上诉人）：张某某，男，1975年4月27日出生。"),
        ("d:4", "委托诉讼代理人：魏建国，北京策略（包头）律师事务所律师。"),
        ("d:5", "被申请人（一审原告、二审被上诉人）：何某某，男，1965年1月9日出生。"),
        ("d:6", "委托诉讼代理人：尹妙琦，内蒙古圣凯达（郑州）律师事务所律师。"),
    ]
    searched = [parties[3], parties[0], parties[2], parties[1]]  # a search's order, not the document's
    assert typed_span("何某某的委托诉讼代理人是谁？", searched).text == "尹妙琦"
    assert typed_span("张某某的委托诉讼代理人是谁？", searched).text == "魏建国"
    assert owner_bonus("本案的审判长是谁？", parties) == [0.0] * 4  # no party named: no line preferred
    assert owner_bonus("何某某的委托诉讼代理人是谁？", parties) == [0.0, 0.0, 0.0, 1.0]


def test_a_span_without_a_phrase_of_the_named_type_is_no_answer():
    assert not fits_question("本案适用什么程序？", "公开开庭审理了本案", "PROCEDURE")
    assert fits_question("本案适用什么程序？", "依法适用简易程序", "PROCEDURE")
    assert not fits_question("二审法院是哪个法院？", "驳回上诉，维持原判", "FACTS")
    assert fits_question("本案由哪位审判员独任审判？", "张晓红", "PROCEDURE")  # no kind named: the reader's
    assert fits_question("被告人何时被逮捕？", "同月18日", "PARTIES")  # a date may be relative


def test_the_law_a_ruling_rests_on_is_the_sentence_citing_the_articles_applied():
    assert question_kind("本案依据哪些法律条文？") == question_kind("法律依据是什么？") == "law"
    assert question_kind("判决的理由是什么？") == "reason"
    applied = "据此，依照《中华人民共和国刑法》第二百六十四条、第六十七条第三款之规定，判决如下："
    assert fits_kind("law", "OPINION", applied)
    # the basis may open a later clause of the sentence, after what the court weighed
    weighed = "根据本案的犯罪事实、性质、情节，依照《中华人民共和国刑法》第二百六十六条、第五十二条之规定，判决如下："
    assert fits_kind("law", "OPINION", weighed)
    assert fits_kind("law", "APPENDIX", "《中华人民共和国刑法》第263条、第264条、第269条")  # a digest's index
    assert not fits_kind("law", "OPINION", "《中华人民共和国刑法》第二百六十九条规定：“犯盗窃罪……”")  # quoted
    assert not fits_kind("law", "OPINION", "本院认为，被告构成违约。")
