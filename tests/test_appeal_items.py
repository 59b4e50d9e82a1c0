"""Which items of the judgment below a later instance upheld, set aside or changed, read from its ruling."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline
from pipeline.analysis.zh_numbers import cn_int
from retrieval.appeal_items import _numbers, asked_items, disposals, items_answer
from retrieval.hybrid import Passage

CLCR = "zh/judgments/clcr_cases.jsonl.gz"


def _ruling(*items: str) -> list[Passage]:
    return [Passage("s0", "d", "判决如下：", "OPINION")] + [
        Passage(f"s{i + 1}", "d", text, "VERDICT") for i, text in enumerate(items)
    ]


PARTLY = _ruling(
    "一、维持沈阳市沈河区人民法院（2017）辽0103民初16901号民事判决第一项、第三项；",
    "二、撤销沈阳市沈河区人民法院（2017）辽0103民初16901号民事判决第二项；",
    "三、变更上述民事判决第四项为：被告于本判决生效后十日内支付原告货款5000元（本判决第一项所涉货款除外）；",
    "四、驳回原告的其他诉讼请求。",
    "二审案件受理费7300元，由上诉人负担。",
)
RETRIAL = _ruling(
    "一、撤销广东省深圳市中级人民法院（2013）深中法民终字第2654号民事判决；",
    "二、维持广东省深圳市罗湖区人民法院（2012）深罗法民一初字第936号民事判决第一项、第二项、第六项、第七项；",
    "三、撤销广东省深圳市罗湖区人民法院（2012）深罗法民一初字第936号民事判决第四项、第五项；",
)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("二审维持了一审判决的哪几项？", ("维持", None, "初")),
        ("一审判决哪几项被撤销了？", ("撤销", None, "初")),
        ("再审撤销了二审判决的哪一项？", ("撤销", None, "终")),
        ("二审改判了原判决的哪些判项？", ("变更", None, None)),
        ("一审判决第三项是否被撤销？", ("撤销", 3, "初")),
        ("二审是否维持了原判？", None),  # the whole judgment: the ruling route's
        ("二审判决结果是什么？", None),
    ],
)
def test_what_a_question_asks(question, asked):
    assert asked_items(question) == asked


@pytest.mark.parametrize(
    ("printed", "numbers"),
    [
        ("第一项、第三项", [1, 3]),
        ("第一至第七项、第九项", [1, 2, 3, 4, 5, 6, 7, 9]),
        ("第八、第十项", [8, 10]),
        ("第一、二、四项", [1, 2, 4]),
        ("第（一）、（三）项", [1, 3]),
    ],
)
def test_a_printed_list_of_items(printed, numbers):
    assert _numbers(printed) == numbers


@given(st.lists(st.integers(1, 19), min_size=1, max_size=6, unique=True))
def test_any_list_of_items_reads_back(numbers):
    digits = "一二三四五六七八九"
    names = [("十" + digits[n - 11] if n > 10 else digits[n - 1] if n < 10 else "十") for n in numbers]
    assert [cn_int(x) for x in names] == numbers
    assert _numbers("、".join(f"第{x}项" for x in names)) == numbers


def test_the_ruling_s_disposals():
    found = disposals(PARTLY)
    assert [(d.verb, d.items) for d in found] == [
        ("维持", "第一项、第三项"),
        ("撤销", "第二项"),
        ("变更", "第四项"),
    ]
    assert found[2].case == found[0].case  # 上述民事判决: the one the item before named
    resolution = _ruling(
        "一、撤销临邑县人民法院（2019）鲁1424民初3075号民事判决；", "二、撤销2019年8月8日某公司股东会决议。"
    )
    assert [d.items for d in disposals(resolution)] == [""]  # a resolution set aside is no judgment below


@pytest.mark.parametrize(
    ("blocks", "question", "answer", "says"),
    [
        (PARTLY, "二审维持了一审判决的哪几项？", "第一项、第三项", "一、维持"),
        (PARTLY, "一审判决哪一项被撤销了？", "第二项", "二、撤销"),
        (PARTLY, "二审变更了一审判决的哪一项？", "第四项", "三、变更"),
        (PARTLY, "一审判决第二项是否被撤销？", "YES", "二、撤销"),
        (PARTLY, "一审判决第三项是否被撤销？", "NO", "一、维持"),
        (RETRIAL, "再审撤销了一审判决的哪几项？", "第四项、第五项", "三、撤销"),  # not the second instance's
        (RETRIAL, "再审撤销了二审判决的哪几项？", "全部", "一、撤销"),
        (RETRIAL, "二审判决第一项是否被撤销？", "YES", "一、撤销"),
        (_ruling("驳回上诉，维持原判。"), "二审撤销了一审判决的哪几项？", "无（维持原判）", "维持原判"),
        (_ruling("驳回上诉，维持原判。"), "一审判决第二项是否被维持？", "YES", "维持原判"),
    ],
)
def test_an_answer_from_the_ruling(blocks, question, answer, says):
    found = items_answer(question, blocks)
    assert found.answer == answer and says in found.units[0][1]


def test_a_question_the_ruling_cannot_answer():
    assert items_answer("一审判决第五项是否被撤销？", PARTLY) is None  # the ruling says nothing of it
    assert (
        items_answer("二审维持了一审判决的哪几项？", _ruling("一、被告于本判决生效后十日内支付货款。"))
        is None
    )


def test_real_second_instances(shared_data, tmp_path):
    wanted = {"f5f89208", "1850db11"}
    with gzip.open(shared_data / CLCR, "rt", encoding="utf-8") as f:
        records = {r["id"][:8]: r for r in map(json.loads, f) if r["id"][:8] in wanted}
    blocks = {}
    for key, record in records.items():
        path = tmp_path / f"{key}.jsonl"
        path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        doc = pipeline.parse(path)
        blocks[key] = [Passage(f"s{i}", key, b.text, b.type.value) for i, b in enumerate(doc.blocks)]
    assert items_answer("二审维持了一审判决的哪几项？", blocks["f5f89208"]).answer == "第一项、第三项"
    assert items_answer("一审判决哪几项被撤销了？", blocks["f5f89208"]).answer == "第二项、第四项"
    # a criminal judgment upheld in its conviction and set aside in its sentence
    assert (
        items_answer("二审撤销了一审判决的哪些部分？", blocks["1850db11"]).answer
        == "对上诉人胡建华的量刑部分"
    )
