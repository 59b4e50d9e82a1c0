"""Questions about a Chinese criminal judgment's sentencing circumstances (自首, 坦白, 累犯, 前科, 谅解, 从犯 …),
answered from the court's reasoning and the defendants' paragraphs."""

from __future__ import annotations

import gzip
import json

import pytest

import pipeline
from retrieval.circumstance_questions import asked_circumstance, circumstance_answer
from retrieval.defendants import defendant_paragraphs, defendants
from retrieval.hybrid import Passage

CRIMINAL = "zh/judgments/judge_criminal.jsonl.gz"


def _judgment(*blocks: tuple[str, str]) -> list[Passage]:
    return [Passage(f"s{i}", "d", text, kind) for i, (kind, text) in enumerate(blocks)]


TWO = _judgment(
    ("HEADER", "刑事判决书"),
    (
        "PARTIES",
        "被告人王太典，男，1993年4月4日出生。2012年10月30日因犯盗窃罪被福建省连江县人民法院判处有期徒刑七个月。",
    ),
    ("PARTIES", "辩护人李某，某律师事务所律师。"),
    ("PARTIES", "被告人颜东斌，男，1994年5月2日出生。2016年10月13日因本案被刑事拘留。"),
    ("FACTS", "经审理查明：被告人颜东斌案发后退赔了被害人的全部损失。"),
    (
        "OPINION",
        "本院认为，被告人王太典、颜东斌贩卖毒品，其行为均已构成贩卖毒品罪。"
        "被告人王太典曾因犯罪被判处有期徒刑，刑罚执行完毕后五年内又犯应当判处有期徒刑以上刑罚之罪，系累犯，应依法从重处罚。"
        "二被告人归案后如实供述自己的罪行，可依法从轻处罚。"
        "被告人颜东斌在共同犯罪中起次要作用，系从犯；其无前科劣迹。"
        "辩护人提出被告人王太典有自首情节的辩护意见，与查明的事实不符，本院不予采纳。"
        "关于辩护人提出的量刑过重的意见，经查，被告人颜东斌案发后主动投案，应认定自首，本院予以纠正。"
        "辩护人提出被告人王太典系初犯，经查，王太典曾因盗窃被判处刑罚，不属于初犯。"
        "依照《最高人民法院关于处理自首和立功具体应用法律若干问题的解释》第一条之规定，判决如下：",
    ),
    ("VERDICT", "一、被告人王太典犯贩卖毒品罪，判处有期徒刑一年。"),
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("被告人张某是否构成自首？", "自首"),
        ("张某有无前科？", "前科"),
        ("被告人是否系累犯？", "累犯"),
        ("被告人是否认罪认罚？", "认罪认罚"),
        ("被告人是否当庭认罪？", "认罪"),
        ("被告人是否取得了被害人的谅解？", "谅解"),
        ("王某是否如实供述了自己的罪行？", "坦白"),
        ("李某在共同犯罪中是否起次要作用？", "从犯"),
        ("被告人有哪些从轻处罚情节？", "which"),
        ("法院为什么对被告人从轻处罚？", "which"),
        ("被告人犯什么罪？", None),
        ("被告人自首的时间是哪天？", None),  # not a yes-no question about it
        ("法院是否采纳了辩护人关于马洪水系从犯的意见？", None),  # whether an argument was accepted
    ],
)
def test_what_a_question_asks(question, asked):
    assert asked_circumstance(question) == asked


def test_the_defendants_are_read_from_their_paragraphs():
    assert defendants(TWO) == ["王太典", "颜东斌"]
    appeal = _judgment(("PARTIES", "上诉人（原审被告人）黄某甲，农民。"), ("PARTIES", "被告人自报张鹏，男。"))
    assert defendants(appeal) == ["黄某甲", "张鹏"]
    others = _judgment(
        ("PARTIES", "被告人马悦，女。因本案于2016年5月1日被刑事拘留。"),
        ("PARTIES", "现羁押于某市看守所。"),  # still hers
        ("PARTIES", "上诉人（原审附带民事诉讼原告人）焦某1，男。"),  # another party's: no longer hers
        ("PARTIES", "指定辩护人王某，某律师事务所律师。"),
    )
    assert [(name, b.text[:6]) for name, b in defendant_paragraphs(others)] == [
        ("马悦", "被告人马悦，"),
        ("马悦", "现羁押于某市"),
    ]


@pytest.mark.parametrize(
    ("question", "answer", "says"),
    [
        ("王太典是否构成累犯？", "YES", "系累犯"),
        ("颜东斌是否构成累犯？", "NO", None),  # the 累犯 sentence speaks of 王太典 alone
        ("颜东斌是否坦白？", "YES", "二被告人归案后如实供述"),  # 二被告人: both of them
        ("颜东斌是否系从犯？", "YES", "系从犯"),
        ("王太典是否有自首情节？", "NO", "不予采纳"),  # a claim the court rejected
        ("颜东斌是否构成自首？", "YES", "应认定自首"),  # what the court found on examining a claim (经查)
        ("王太典是否初犯？", "NO", "不属于初犯"),  # the claim, answered after 经查
        ("颜东斌有没有前科？", "NO", "无前科劣迹"),  # denied in the reasoning
        ("王太典有前科吗？", "YES", "因犯盗窃罪被福建省连江县人民法院判处"),  # his own paragraph
        ("颜东斌是否退赃？", "YES", "退赔了被害人的全部损失"),  # the facts, where the reasoning is silent
        ("王太典是否有立功表现？", "NO", None),  # a law's title names 立功, the judgment finds none
    ],
)
def test_a_circumstance_is_read_for_the_defendant_asked_about(question, answer, says):
    found = circumstance_answer(question, asked_circumstance(question), TWO)
    assert found.answer == answer and found.answer_type == answer.lower()
    assert found.silent is (says is None)
    if says:
        assert says in found.units[0][1]


def test_which_circumstances_were_weighed():
    found = circumstance_answer("法院对颜东斌考虑了哪些从轻处罚情节？", "which", TWO)
    assert found.answer_type == "sentence"
    assert [s for _, s in found.units] == ["二被告人归案后如实供述自己的罪行，可依法从轻处罚。"]
    heavier = circumstance_answer("王太典有哪些从重处罚情节？", "which", TWO)
    assert [s[-12:] for _, s in heavier.units] == ["系累犯，应依法从重处罚。"]


def test_a_judgment_without_reasoning_or_defendants_is_not_answered():
    civil = _judgment(
        ("HEADER", "民事判决书"),
        ("PARTIES", "被告人保某公司，住所地某市。"),
        ("OPINION", "本院认为，被告应当赔偿。"),
    )
    assert circumstance_answer("被告人保某公司是否赔偿？", "赔偿", civil) is None  # 被告 人保…: no defendant
    assert circumstance_answer("王太典是否构成自首？", "自首", TWO[:4]) is None  # no reasoning


def _record(shared_data, tmp_path, prefix: str) -> list[Passage]:
    """A judge_criminal record's whole judgment (`fd`), parsed as `ldx run` reads a one-record JSONL file."""
    with gzip.open(shared_data / CRIMINAL, "rt", encoding="utf-8") as f:
        record = next(r for r in map(json.loads, f) if r["text_id"].startswith(prefix))
    path = tmp_path / f"{prefix}.jsonl"
    path.write_text(json.dumps({"text_id": prefix, "text": record["fd"]}, ensure_ascii=False) + "\n", "utf-8")
    doc = pipeline.parse(path)
    return [Passage(f"s{i}", prefix, b.text, b.type.value) for i, b in enumerate(doc.blocks)]


def test_real_judgments(shared_data, tmp_path):
    denied = _record(shared_data, tmp_path, "3794cfa5")  # 其行为不能认定为自首 … 系从犯
    assert circumstance_answer("潘某某是否构成自首？", "自首", denied).answer == "NO"
    assert circumstance_answer("潘某某是否系从犯？", "从犯", denied).answer == "YES"
    rejected = _record(shared_data, tmp_path, "aef998bd")  # the defence's 自首 rejected; 未得逞，系犯罪未遂
    assert circumstance_answer("姚兴军是否有自首情节？", "自首", rejected).answer == "NO"
    assert circumstance_answer("姚兴军是否属于犯罪未遂？", "未遂", rejected).answer == "YES"
    prior = _record(shared_data, tmp_path, "973e1cf2")  # a conviction in 2015 and 系累犯
    found = circumstance_answer("李志有前科吗？", "前科", prior)
    assert found.answer == "YES" and "2015年2月因贩卖毒品罪被判处" in found.units[0][1]
