"""A published case's own sections (retrieval/digest_questions.py): its 裁判要点 (or 裁判要旨), 典型意义, 关键词 and
裁判结果, read from its heading to the next. Texts written for these tests, and CLCR records of the shared data."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline
from pipeline.records import DocKind
from retrieval.digest_questions import asked_section, section_answer
from tests.zh_records import clcr_passages, clcr_text, paragraphs

_case = partial(paragraphs, "OTHER", doc="c")


GUIDING = _case(
    "指导案例145号：张某非法控制计算机信息系统案",
    "关键词　刑事/非法控制计算机信息系统罪/木马程序",
    "裁判要点",
    "1.通过植入木马程序的方式非法控制计算机信息系统的，应当认定为非法控制。",
    "2.未造成系统功能实质性破坏的，不应当认定为破坏计算机信息系统罪。",
    "相关法条",
    "《中华人民共和国刑法》第285条",
    "基本案情",
    "被告人张某植入木马程序。",
)
TYPICAL = _case(
    "（一）基本案情",
    "被告人陈某开设赌场。",
    "（二）",
    "裁判结果",
    "法院判处陈某有期徒刑六个月。宣判后，陈某未上诉。",
    "【典型意义】",
    "疫情期间依法严惩赌博犯罪。及时维护了防控秩序。",
    "【点评专家】",
    "某大学教授。",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("本案的裁判要旨是什么？", "gist"),
        ("该指导案例的裁判要点是什么？", "gist"),
        ("该案例有什么典型意义？", "significance"),
        ("本案例有何意义？", "significance"),
        ("本案的关键词有哪些？", "keywords"),
        ("裁判结果如何？", "result"),
        ("被告人被判处什么刑罚？", None),
    ],
)
def test_what_a_question_asks(question, asked):
    assert asked_section(question) == asked


def test_a_guiding_case_s_points_and_keywords():
    gist = section_answer("本案的裁判要旨是什么？", GUIDING)
    assert gist.answer_type == "sentence"
    assert gist.answer.startswith("1.通过植入木马程序") and gist.answer.endswith("破坏计算机信息系统罪。")
    assert [seg for seg, _ in gist.units] == ["c:3", "c:4"]  # up to 相关法条, the next heading
    keywords = section_answer("关键词是什么？", GUIDING)
    assert (keywords.answer, keywords.answer_type) == ("刑事/非法控制计算机信息系统罪/木马程序", "field")
    assert section_answer("本案的典型意义是什么？", GUIDING) is None


def test_numbered_and_bracketed_headings_and_a_heading_split_from_its_number():
    result = section_answer("本案的裁判结果是什么？", TYPICAL)
    assert result.answer == "法院判处陈某有期徒刑六个月。宣判后，陈某未上诉。"
    assert [s for _, s in result.units] == ["法院判处陈某有期徒刑六个月。", "宣判后，陈某未上诉。"]
    assert (
        section_answer("这一典型案例的意义是什么？", TYPICAL).answer
        == "疫情期间依法严惩赌博犯罪。及时维护了防控秩序。"
    )
    inline = _case("裁判结果：法院改判无罪。", "裁判要点：兜底条款不得扩大适用。")
    assert section_answer("本案的裁判要点是什么？", inline).answer == "兜底条款不得扩大适用。"
    assert section_answer("本案的裁判结果是什么？", inline).answer == "法院改判无罪。"


@given(st.text(alphabet="裁判要点旨典型意义关键词结果【】（一）：。本案", max_size=60))
def test_any_case_text_reads_without_error(text):
    for question in ("裁判要旨是什么？", "典型意义是什么？", "关键词有哪些？"):
        found = section_answer(question, _case(text, "下文。"))
        assert found is None or found.answer


def test_shared_case_reports(shared_data, tmp_path):
    passages = clcr_passages(shared_data, tmp_path, "fc7343d94edc")
    gist = section_answer("该指导案例的裁判要旨是什么？", passages)
    assert (
        gist.answer.startswith("1.通过植入木马程序的方式")
        and "2.通过修改、增加计算机信息系统数据" in gist.answer
    )
    # a typical case that names no court in the words a judgment uses is still read as one
    src = tmp_path / "case.txt"
    src.write_text(clcr_text(shared_data, "8f64a281d83c"), encoding="utf-8")
    assert pipeline.parse(src).kind == DocKind.ZH_JUDGMENT
