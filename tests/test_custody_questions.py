"""A criminal defendant's custody in the case (刑事拘留, 逮捕, 取保候审, 监视居住, where held), read from the
defendant's own paragraph."""

from __future__ import annotations

import datetime as dt
import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline
from retrieval.custody_questions import _events, asked_custody, custody_answer
from retrieval.hybrid import Passage

CRIMINAL = "zh/judgments/judge_criminal.jsonl.gz"


def _judgment(*parties: str) -> list[Passage]:
    return [Passage(f"s{i}", "d", text, "PARTIES") for i, text in enumerate(parties)] + [
        Passage("s9", "d", "本院认为，被告人的行为已构成犯罪。", "OPINION")
    ]


TWO = _judgment(
    "公诉机关某市人民检察院。",
    "被告人冯云，男，1993年8月24日出生。2012年3月因犯盗窃罪被判处拘役三个月，同年6月刑满释放；2016年5月1日因吸毒被"
    "行政拘留十五日。因涉嫌犯容留他人吸毒罪，于2017年4月22日被某市公安局刑事拘留，同年5月5日经某市人民检察院批准逮捕，"
    "次日被执行逮捕。现羁押于景德镇市看守所。",
    "辩护人李某，某律师事务所律师。",
    "被告人赵志刚，男。因本案于2018年12月30日被刑事拘留，同月31日被取保候审，2019年3月2日被监视居住。",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("被告人冯云何时被刑事拘留？", ("刑事拘留", "when")),
        ("冯云什么时候被逮捕的？", ("逮捕", "when")),
        ("被告人是否被取保候审？", ("取保候审", "whether")),
        ("赵志刚何时被监视居住？", ("监视居住", "when")),
        ("被告人现羁押于何处？", ("held", "where")),
        ("冯云关押在哪个看守所？", ("held", "where")),
        ("冯云何时被行政拘留？", None),  # not a measure of the case
        ("被告人犯什么罪？", None),
    ],
)
def test_what_a_question_asks(question, asked):
    assert asked_custody(question) == asked


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("被告人冯云何时被刑事拘留？", "2017年4月22日"),  # not the 行政拘留 of 2016
        ("冯云何时被逮捕？", "2017年5月6日"),  # carried out the day after it was approved
        ("冯云是否被取保候审？", "NO"),
        ("冯云现羁押于何处？", "景德镇市看守所"),
        ("赵志刚何时被取保候审？", "2018年12月31日"),  # 同月31日
        ("赵志刚何时被监视居住？", "2019年3月2日"),
        ("赵志刚是否被取保候审？", "YES"),
    ],
)
def test_an_answer_from_the_defendant_s_paragraph(question, answer):
    assert custody_answer(question, TWO).answer == answer


def test_questions_the_paragraph_cannot_answer():
    assert custody_answer("赵志刚现羁押于何处？", TWO) is None  # not said
    assert custody_answer("赵志刚何时被逮捕？", TWO) is None
    assert custody_answer("被告人何时被逮捕？", TWO) is None  # two defendants, none named
    assert custody_answer("王某何时被逮捕？", _judgment("被告人王某，男。")) is None


@given(st.dates(dt.date(1990, 1, 1), dt.date(2030, 12, 1)), st.integers(1, 27))
def test_days_read_with_the_last_one_given(first, later):
    second = dt.date(first.year, first.month, later) if later > first.day else first
    text = (
        f"被告人某某。因本案于{first.year}年{first.month}月{first.day}日被刑事拘留，"
        f"同月{second.day}日被逮捕，次日被取保候审。"
    )
    events = _events(Passage("s", "d", text, "PARTIES"))
    assert [(name, day) for name, day, _, _ in events] == [
        ("刑事拘留", first),
        ("逮捕", second),
        ("取保候审", second + dt.timedelta(days=1)),
    ]


def test_real_judgment(shared_data, tmp_path):
    with gzip.open(shared_data / CRIMINAL, "rt", encoding="utf-8") as f:
        record = next(r for r in map(json.loads, f) if r["text_id"].startswith("9b7e9b26"))
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps({"text_id": "case", "text": record["fd"]}, ensure_ascii=False) + "\n", "utf-8")
    blocks = [Passage(f"s{i}", "d", b.text, b.type.value) for i, b in enumerate(pipeline.parse(path).blocks)]
    # 同年4月6日经本院批准对其逮捕，4月13日由定远县公安局执行逮捕
    assert custody_answer("林某2何时被逮捕？", blocks).answer == "2016年4月13日"
    assert custody_answer("林某某何时被取保候审？", blocks).answer == "2015年11月26日"
