"""Questions about what a Chinese criminal verdict imposed on a defendant, answered from that defendant's item
of the verdict."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from run_tables import write_texts

from retrieval.covers import Covers
from retrieval.verdict_questions import VERDICT_BLOCKS, answer_verdict, convictions, verdict_part

CRIMINAL = "zh/judgments/judge_criminal.jsonl.gz"
# two defendants; several charges joined (数罪并罚); a second instance restating the first's verdict
RECORDS = {"two": "3783b8c2", "joined": "4de720c1", "appeal": "996a2d25"}


@pytest.mark.parametrize(
    ("question", "part"),
    [
        ("叶志敏犯什么罪？", "charges"),
        ("何新碧犯了哪些罪？", "charges"),
        ("法院认定王某构成什么罪？", "charges"),
        ("叶志敏被判处什么刑罚？", "penalty"),
        ("被告人李某被判了什么刑？", "penalty"),
        ("张朝伟被判处有期徒刑几年？", "penalty"),
        ("刘辉的有期徒刑是多长时间？", "penalty"),
        ("何新碧数罪并罚决定执行什么刑罚？", "penalty"),
        ("陈金煜被判处罚金多少？", "fine"),
        ("唐珊是否被判处缓刑？", "probation"),
        ("黄琴的缓刑考验期是多长？", "probation"),
        ("叶志敏的刑期从何时起至何时止？", "term"),
        ("严毛洪被判了几年，罚金多少？", "penalty"),  # both: the whole penalty
        ("陈金煜犯什么罪，判处什么刑罚？", None),  # a sentence's worth: the verdict's sentence answers
        ("本判决是什么时候作出的？", None),
        ("本案的审判长是谁？", None),
        ("涉案毒品如何处理？", None),
        ("王富贵的缓刑期限是多长？", "probation"),
        ("罚金应在何时缴纳？", None),  # when to pay, not how much
        ("为什么对王富贵适用缓刑？", None),  # why: the court's reasoning
        ("法院依据什么判处被告人有期徒刑？", None),
    ],
)
def test_what_a_question_asks_of_a_verdict(question, part):
    assert verdict_part(question) == part


def _verdict(*items: str) -> list[tuple[int, str, str]]:
    return [(0, "HEADER", "某某市人民法院"), *[(i + 1, "VERDICT", t) for i, t in enumerate(items)]]


def test_each_defendant_is_answered_from_their_own_item():
    verdict = _verdict(
        "一、被告人赵甲犯强奸罪，判处有期徒刑四年（刑期从判决执行之日起计算，即自2017年6月20日起至2021年6月19日止）。",
        "二、被告人钱乙犯强奸罪，判处有期徒刑三年六个月，缓刑四年，并处罚金人民币二万元，限判决生效后十日内缴纳。",
    )
    for question, text, kind in [
        ("钱乙被判处有期徒刑几年？", "有期徒刑三年六个月", "field"),
        ("钱乙被判处什么刑罚？", "有期徒刑三年六个月，缓刑四年，并处罚金人民币二万元", "field"),
        ("赵甲的刑期从何时起至何时止？", "自2017年6月20日起至2021年6月19日止", "field"),
        ("钱乙被判处罚金多少？", "人民币二万元", "field"),
        ("钱乙是否被宣告缓刑？", "YES", "yes"),
        ("赵甲是否被宣告缓刑？", "NO", "no"),
        ("钱乙的缓刑考验期是多长？", "四年", "field"),
        ("钱乙被判了几年，罚金多少？", "有期徒刑三年六个月，缓刑四年，并处罚金人民币二万元", "field"),
    ]:
        found, answer_type = answer_verdict(verdict, verdict_part(question), question, named_only=True)
        assert (found.text, answer_type) == (text, kind), question
        assert found.block_idx == (1 if "赵甲" in question else 2), question
    # neither named: the verdict has two defendants, and a name it lacks is some other case's
    assert answer_verdict(verdict, "charges", "被告人犯什么罪？", named_only=False) is None
    assert answer_verdict(verdict, "charges", "孙丙犯什么罪？", named_only=False) is None
    assert answer_verdict(verdict, "fine", "赵甲被判处罚金多少？", named_only=True) is None  # none imposed


def test_a_question_naming_several_defendants_gets_each_ones_answer():
    verdict = _verdict(
        "一、被告人王某犯窝藏罪，判处有期徒刑十个月，缓刑一年。",
        "二、被告人王某某犯窝藏罪，判处有期徒刑九个月，缓刑一年。",
        "三、被告人李丙犯窝藏罪，判处有期徒刑九个月，缓刑一年。",
    )
    ask = lambda q: answer_verdict(verdict, verdict_part(q), q, named_only=True)  # noqa: E731
    found, answer_type = ask("王某和李丙各被判了什么刑？")
    assert (found.text, answer_type) == (
        "王某：有期徒刑十个月，缓刑一年；李丙：有期徒刑九个月，缓刑一年",
        "field",
    )
    assert found.block_idx == 1  # cited at the first defendant named
    # the same penalty, said once for both; 王某 is not named by 王某某 alone
    found, _ = ask("王某某和李丙分别被判处多久的有期徒刑？")
    assert found.text == "王某某、李丙：有期徒刑九个月"
    assert ask("王某某被判处有期徒刑几年？")[0].text == "有期徒刑九个月"
    assert ask("王某和李丙是否被宣告缓刑？") is None  # a yes or no for each is not one answer


def test_the_only_defendant_is_answered_when_the_judgment_was_named_otherwise():
    verdict = _verdict(
        "被告人周某犯盗窃罪，判处有期徒刑十个月；并处罚金人民币五千元，限本判决生效后一个月内缴纳。"
    )
    found, _ = answer_verdict(verdict, "penalty", "本案被告人被判处什么刑罚？", named_only=False)
    assert found.text == "有期徒刑十个月，并处罚金人民币五千元"  # the fine after the semicolon is part of it
    assert answer_verdict(verdict, "penalty", "本案被告人被判处什么刑罚？", named_only=True) is None
    noted = _verdict(
        "被告人王某犯危险驾驶罪，判处拘役二个月，缓刑三个月（缓刑考验期限，从本判决确定之日起计算），"
        "并处罚金人民币四千元（罚金已缴纳）。"
    )
    found, _ = answer_verdict(noted, "penalty", "王某被判处什么刑罚？", named_only=True)
    assert found.text == "拘役二个月，缓刑三个月，并处罚金人民币四千元"  # the fine after the note too
    alone = _verdict("被告人王某犯拒不支付劳动报酬罪，单处罚金人民币五千元（罚金已缴纳）。")
    assert (
        answer_verdict(alone, "penalty", "王某被判处什么刑罚？", named_only=True)[0].text
        == "单处罚金人民币五千元"
    )
    assert answer_verdict(alone, "fine", "王某被判处罚金多少？", named_only=True)[0].text == "人民币五千元"
    exempt = _verdict("被告人王某犯盗窃罪，免予刑事处罚。")
    assert (
        answer_verdict(exempt, "penalty", "王某被判处什么刑罚？", named_only=True)[0].text == "免予刑事处罚"
    )


_NAMES = st.text(alphabet="赵钱孙李周吴郑王冯陈褚卫蒋沈韩杨", min_size=2, max_size=3)
_CHARGES = st.sampled_from(
    [
        "盗窃罪",
        "走私、贩卖、运输、制造毒品罪",
        "提供侵入、非法控制计算机信息系统程序、工具罪",
        "掩饰、隐瞒犯罪所得罪",
    ]
)
_TERMS = st.sampled_from(["有期徒刑一年", "有期徒刑三年六个月", "拘役五个月", "管制六个月"])


@given(st.lists(st.tuples(_NAMES, _CHARGES, _TERMS), min_size=1, max_size=4, unique_by=lambda t: t[0]))
def test_a_verdict_written_from_its_items_reads_back_as_them(items):
    """Whatever the names, charges and terms, each defendant's item reads back whole, in one block or one
    block per item."""
    written = [
        f"{i + 1}、被告人{name}犯{charge}，判处{term}。" for i, (name, charge, term) in enumerate(items)
    ]
    for verdict in (_verdict("".join(written)), _verdict(*written)):
        read = {c.defendant: (c.charges, c.penalty) for c in convictions(verdict)}
        assert read == {name: ((charge,), term) for name, charge, term in items}


@pytest.fixture(scope="module")
def judgments(tmp_path_factory, shared_data):
    out = tmp_path_factory.mktemp("verdicts")
    with gzip.open(shared_data / CRIMINAL, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    texts = {name: next(r["fd"] for r in rows if r["text_id"].startswith(p)) for name, p in RECORDS.items()}
    ids, covers = write_texts(out, texts), Covers(out)
    return {name: covers.blocks(doc_id, "zh_judgment", VERDICT_BLOCKS) for name, doc_id in ids.items()}


def test_verdicts_of_real_judgments(judgments):
    for name, question, text in [
        ("two", "张朝伟被判处有期徒刑几年？", "有期徒刑三年六个月"),
        ("two", "赵高银犯什么罪？", "强奸罪"),
        ("joined", "何新碧犯了哪些罪？", "盗窃罪、贩卖毒品罪"),
        ("joined", "何新碧数罪并罚决定执行什么刑罚？", "有期徒刑一年四个月，并处罚金5000元"),
        ("joined", "何新碧被判处罚金多少？", "5000元"),  # the fine 决定执行, not one charge's
        ("appeal", "冯新楼被判处罚金多少？", "五万元人民币"),  # this court's, not the first instance's 九万元
    ]:
        found, _ = answer_verdict(judgments[name], verdict_part(question), question, named_only=True)
        blocks = {idx: (kind, t) for idx, kind, t in judgments[name]}
        assert found.text == text, question
        assert blocks[found.block_idx][0] == "VERDICT" and found.anchor in blocks[found.block_idx][1]


def test_a_ruling_the_facts_report_answers_where_the_verdict_has_no_item():
    """A case report quotes the rulings of the instances in its facts; a second instance that upholds the
    first has no item of its own."""
    facts = (
        "山东省某县人民法院于2017年12月22日作出（2017）鲁1724刑初316号刑事判决：一、被告人王某犯抢劫罪，判处有期徒刑八年，"
        "并处罚金人民币五千元；二、被告人沈某帅犯盗窃罪，判处有期徒刑九个月。宣判后，被告人王某以量刑过重为由提出上诉，"
        "称其不构成抢劫罪。某市中级人民法院作出刑事裁定：驳回上诉，维持原判。"
    )
    report = [(0, "HEADER", "沈某帅盗窃、王某抢劫案"), (1, "FACTS", facts)]
    read = {c.defendant: (c.charges, c.penalty) for c in convictions(report)}
    assert read == {
        "王某": (("抢劫罪",), "有期徒刑八年，并处罚金人民币五千元"),
        "沈某帅": (("盗窃罪",), "有期徒刑九个月"),
    }
    upheld = [(0, "FACTS", facts), (1, "VERDICT", "驳回上诉，维持原判。")]
    assert (
        answer_verdict(upheld, "penalty", "沈某帅被判处什么刑罚？", named_only=True)[0].text
        == "有期徒刑九个月"
    )
    # a judgment's own verdict is read before anything its facts report
    own = [(0, "FACTS", facts), (1, "VERDICT", "被告人王某犯抢劫罪，判处有期徒刑七年。")]
    assert [c.penalty for c in convictions(own)] == ["有期徒刑七年"]


def test_a_term_whose_note_is_a_block_of_its_own_is_cited_there():
    verdict = _verdict(
        "被告人孙丙犯盗窃罪，判处有期徒刑七个月，并处罚金人民币2000元。",
        "（刑期从判决执行之日起计算，即自2017年9月15日起至2018年4月14日止，罚金于判决生效后三十日内缴纳。）",
    )
    found, _ = answer_verdict(verdict, "term", "孙丙的刑期从哪天起到哪天止？", named_only=True)
    assert (found.text, found.block_idx) == ("自2017年9月15日起至2018年4月14日止", 2)
    assert answer_verdict(verdict, "fine", "孙丙被判处罚金多少？", named_only=True)[0].block_idx == 1


def test_a_second_instance_that_changes_one_sentence_is_read_for_its_new_item():
    verdict = _verdict(
        "一、维持某区人民法院刑事判决的第一项，即：“一、被告人汪某仲犯抢劫罪，判处有期徒刑七年，并处罚金人民币10000元；”",
        "二、撤销某区人民法院刑事判决的第二项，即：“二、被告人吴某忠犯抢劫罪，判处有期徒刑十一年，并处罚金人民币20000元”；",
        "三、上诉人（原审被告人）吴某忠犯抢劫罪，判处有期徒刑九年，并处罚金人民币20000元。（即自2013年7月14日起至2022年7月13日止。）",
    )
    read = {c.defendant: c.penalty for c in convictions(verdict)}
    assert read == {
        "汪某仲": "有期徒刑七年，并处罚金人民币10000元",
        "吴某忠": "有期徒刑九年，并处罚金人民币20000元",
    }
    found, _ = answer_verdict(verdict, "term", "吴某忠的刑期自何时起至何时止？", named_only=True)
    assert (found.text, found.block_idx) == ("自2013年7月14日起至2022年7月13日止", 3)
