"""Questions about what a Chinese court decided and the costs it ordered, answered from the ruling asked about
(retrieval/outcome_questions.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from run_tables import clcr_blocks

from retrieval.hybrid import Passage
from retrieval.outcome_questions import case_instance, outcome_answer, outcome_part
from retrieval.ruling_questions import units

# a second instance changing the first's judgment (its ruling reported over two blocks); a retrial
RECORDS = {"appeal": "f5f89208", "retrial": "f4b34b29"}


@pytest.mark.parametrize(
    ("question", "part"),
    [
        ("许磊、王巍合同纠纷案的判决结果是什么？", "ruling"),
        ("二审法院如何判决？", "ruling"),
        ("一审法院是怎么判的？", "ruling"),
        ("建安某公司的再审申请结果如何？", "ruling"),
        ("法院作出了什么裁定？", "ruling"),
        ("二审案件受理费是多少？", "fee amount"),
        ("案件受理费由谁负担？", "fee payer"),
        ("一审诉讼费由哪一方承担？", "fee payer"),
        ("二审案件受理费如何负担？", "fee"),
        ("受理费多少，由谁负担？", "fee"),
        ("法院是否支持原告的诉讼请求？", None),  # whether: retrieval.ruling_questions
        ("一审判决是否正确？", None),
        ("法院为何作出这样的判决？", None),  # why: the court's reasoning
        ("原告的诉讼请求是什么？", None),
        ("本案的审判长是谁？", None),
    ],
)
def test_what_a_question_asks_of_a_ruling(question, part):
    assert outcome_part(question) == part


def test_the_instance_a_case_number_names():
    assert [
        case_instance(n) for n in ["（2018）豫11民终1号", "（2024）渝0107民初17358号", "（2020）浙01民再32号"]
    ] == [
        "二审",
        "一审",
        "再审",
    ]
    assert case_instance("") is None


def _passages(*blocks: tuple[str, str]) -> list[Passage]:
    return [Passage(f"d:{i}", "d", text, kind) for i, (kind, text) in enumerate(blocks)]


APPEAL = _passages(
    (
        "PROCEDURE",
        "上诉人甲公司因与被上诉人乙某买卖合同纠纷一案，不服某区人民法院（2019）某0101民初5号民事判决，提起上诉。",
    ),
    (
        "PROCEDURE",
        "一审法院认为，双方买卖合同合法有效。依照《中华人民共和国合同法》第一百零七条之规定，判决：",
    ),
    ("PROCEDURE", "一、甲公司于判决生效后十日内支付乙某货款5000元；"),
    ("PROCEDURE", "二、驳回乙某的其他诉讼请求。一审案件受理费50元，由甲公司负担。"),
    ("FACTS", "本院二审期间，当事人没有提交新证据。"),
    ("OPINION", "本院认为，一审判决认定事实清楚，适用法律正确。"),
    ("VERDICT", "驳回上诉，维持原判。"),
    ("VERDICT", "二审案件受理费50元，由上诉人甲公司负担（于本判决生效后七日内交纳）。"),
    ("NOTICE", "本判决为终审判决。"),
)


def test_a_second_instance_answers_its_own_ruling_and_reports_the_first():
    own = outcome_answer("二审判决结果是什么？", "ruling", APPEAL, "（2019）某01民终9号")
    assert (own.answer, own.answer_type, own.units) == (
        "驳回上诉，维持原判。",
        "sentence",
        [("d:6", "驳回上诉，维持原判。")],
    )
    for question in ("一审法院如何判决？", "原审法院是怎么判的？"):
        first = outcome_answer(question, "ruling", APPEAL, "（2019）某01民终9号")
        # the items after 判决：, over two blocks, up to the first sentence that is no item (its costs)
        assert first.answer == "一、甲公司于判决生效后十日内支付乙某货款5000元；二、驳回乙某的其他诉讼请求。"
        assert [s for s, _ in first.units] == ["d:2", "d:3"]
    assert outcome_answer("再审法院如何判决？", "ruling", APPEAL, "（2019）某01民终9号") is None


def test_interest_between_two_items_and_a_first_instance_quoted_in_its_own_words():
    quoted = _passages(
        ("OPINION", "本院认为，原告的证据不足。依照《中华人民共和国票据法》第四条之规定，判决如下："),
        (
            "OPINION",
            "一、甲公司返还乙某购车款351300元；如未按本判决指定的期间履行给付金钱义务，应当加倍支付迟延履行"
            "期间的债务利息。二、驳回乙某的其他诉讼请求。案件受理费17445元，由甲公司负担。",
        ),
        (
            "OPINION",
            "本院认为，一审判决认定事实清楚，适用法律正确。依照《中华人民共和国民事诉讼法》之规定，判决如下：",
        ),
        ("VERDICT", "驳回上诉，维持原判。"),
    )
    # in a second instance, a ruling reported without its court's name is the first instance's, not one of
    # an enforcement or a criminal case the facts cite
    cited = _passages(
        (
            "FACTS",
            "2017年6月22日，某中级人民法院作出（2016）粤03执2419号之二执行裁定书，裁定：1、解除对某房的查封。",
        ),
        (
            "FACTS",
            "某中级人民法院作出（2013）浙嘉刑初字第75号刑事判决：一、被告人林某犯合同诈骗罪，判处有期徒刑五年。",
        ),
    )
    found = outcome_answer("一审法院如何判决？", "ruling", cited + quoted, "（2014）郑民三终字第200号")
    assert found.answer == "一、甲公司返还乙某购车款351300元；二、驳回乙某的其他诉讼请求。"
    assert outcome_answer("二审判决结果如何？", "ruling", quoted, "（2014）郑民三终字第200号").answer == (
        "驳回上诉，维持原判。"
    )


def test_a_ruling_of_several_items_is_answered_whole_without_costs_interest_or_appeal():
    ruling = _passages(
        ("VERDICT", "一、撤销某区人民法院（2018）某0109民初23565号民事判决；"),
        ("VERDICT", "二、游某于本判决生效后十日内支付甲公司价款279200元；三、驳回甲公司的其他诉讼请求。"),
        ("VERDICT", "如游某未按本判决指定的期间履行给付金钱义务，应当加倍支付迟延履行期间的债务利息。"),
        ("VERDICT", "一审案件受理费5488元，由游某负担；再审案件受理费5488元，由张某、李某共同负担。"),
        ("NOTICE", "本判决为终审判决。"),
    )
    found = outcome_answer("判决结果是什么？", "ruling", ruling, "（2020）某01民再32号")
    assert found.answer == (
        "一、撤销某区人民法院（2018）某0109民初23565号民事判决；二、游某于本判决生效后十日内支付甲公司价款279200元；"
        "三、驳回甲公司的其他诉讼请求。"
    )
    assert [s for s, _ in found.units] == ["d:0", "d:1", "d:1"]
    # costs: the asked instance's clause, else the judgment's own
    for question, part, answer in [
        ("再审案件受理费是多少？", "fee amount", "5488元"),
        ("案件受理费由谁负担？", "fee payer", "张某、李某"),
        ("一审案件受理费由谁负担？", "fee payer", "游某"),
        ("一审案件受理费如何负担？", "fee", "一审案件受理费5488元，由游某负担"),
    ]:
        assert outcome_answer(question, part, ruling, "（2020）某01民再32号").answer == answer, question
    assert outcome_answer("二审案件受理费是多少？", "fee amount", ruling, "（2020）某01民再32号") is None


def test_costs_of_both_instances_in_one_clause_and_a_note_after_the_payer():
    both = _passages(("VERDICT", "一、二审案件受理费共计200元，由被上诉人乙某负担。"))
    assert (
        outcome_answer("一审受理费由谁负担？", "fee payer", both, "（2019）某01民终9号").answer
        == "被上诉人乙某"
    )
    found = outcome_answer("二审案件受理费由谁负担？", "fee payer", APPEAL, "（2019）某01民终9号")
    assert (found.answer, found.units[0][0]) == ("上诉人甲公司", "d:7")  # not the first instance's, reported
    shared = _passages(("VERDICT", "案件受理费50元，由甲厂负担15元，乙厂负担35元。"))
    assert outcome_answer("受理费由谁负担？", "fee payer", shared, "（2010）某民二初字第43号").answer == (
        "甲厂负担15元，乙厂负担35元"
    )


def test_a_case_report_tells_the_instances_by_their_case_numbers():
    report = _passages(
        (
            "FACTS",
            "某区人民法院于2024年11月14日作出（2024）渝0107民初17358号民事判决：一、陈某于每月10日前向唐某支付赡养费300元；"
            "二、驳回原告唐某其他诉讼请求。宣判后，陈某提出上诉。",
        ),
        ("FACTS", "某中级人民法院于2024年12月31日作出（2024）渝05民终11440号民事判决：驳回上诉，维持原判。"),
    )
    first = outcome_answer("一审法院如何判决？", "ruling", report, "")
    assert first.answer == "一、陈某于每月10日前向唐某支付赡养费300元；二、驳回原告唐某其他诉讼请求。"
    assert outcome_answer("二审法院如何判决？", "ruling", report, "").answer == "驳回上诉，维持原判。"
    assert outcome_answer("判决结果是什么？", "ruling", report, "") is None  # no ruling of its own: which?


def _nested(s: str) -> bool:
    """Brackets closed in the order they open, as a ruling prints them (not "（））（")."""
    depth = 0
    for ch in s:
        depth += (ch == "（") - (ch == "）")
        if depth < 0:
            return False
    return depth == 0


_ITEM = st.text(alphabet="甲乙丙支付驳回诉讼请求元0123（）", min_size=1, max_size=12).filter(_nested)


@given(st.lists(_ITEM, min_size=1, max_size=6))
def test_units_hold_the_whole_text_and_never_cut_inside_brackets(items):
    numerals = "一二三四五六七八九十"
    text = "判决：" + "".join(
        f"{numerals[i]}、{item}（即自2017年1月1日起。）；" for i, item in enumerate(items)
    )
    cut = units(text)
    assert "".join(cut) == text
    assert all(u.count("（") == u.count("）") for u in cut)
    assert len(cut) == len(items) + 1


@pytest.fixture(scope="module")
def judgments(shared_data, tmp_path_factory):
    return clcr_blocks(shared_data, tmp_path_factory.mktemp("outcomes"), RECORDS)


def test_rulings_and_costs_of_real_judgments(judgments):
    for name, question, answer in [
        (
            "appeal",
            "二审判决结果是什么？",
            "一、维持沈阳市沈河区人民法院（2017）辽0103民初16901号民事判决第一项、第三项；",
        ),
        ("appeal", "二审案件受理费由谁负担？", "沈阳玮烨文化传媒有限公司"),
        # 一审法院依照…判决如下： in a paragraph the parser took for a party's (CLAIMS)
        (
            "appeal",
            "一审法院如何判决？",
            "一、沈阳玮烨文化传媒有限公司于本判决生效之日起10日内赔偿沈阳市好利来实业",
        ),
        ("retrial", "再审案件受理费是多少？", "5488元"),
        ("retrial", "再审案件受理费由谁负担？", "张剑飞、李发启"),
        (
            "retrial",
            "原审法院如何判决？",
            "一、张剑飞、李发启于本判决生效后十日内支付杭州巨芯电子有限公司价款279200元",
        ),
    ]:
        passages, case_number = judgments[name]
        found = outcome_answer(question, outcome_part(question), passages, case_number)
        assert found is not None and found.answer.startswith(answer), question
    appeal = outcome_answer("判决结果是什么？", "ruling", *judgments["appeal"])
    assert appeal.answer.endswith("三、驳回当事人其他诉讼请求。") and "受理费" not in appeal.answer
