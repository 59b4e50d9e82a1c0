"""Questions about what a party to a Chinese judgment asked for or argued, answered from that party's own
paragraph (retrieval/party_questions.py)."""

from __future__ import annotations

import pytest
from run_tables import clcr_blocks

from retrieval.hybrid import Passage
from retrieval.party_questions import party_answer, party_part

# an appeal whose reasons go on over two more paragraphs; a retrial; a claim at the end of an account
RECORDS = {"appeal": "f57aafcf", "retrial": "f4b34b29", "account": "04ea9881"}


@pytest.mark.parametrize(
    ("question", "part"),
    [
        ("王凯的上诉请求是什么？", "request"),
        ("原告向一审法院提出了哪些诉讼请求？", "request"),
        ("李发启的再审请求是什么？", "request"),
        ("魏青花的上诉理由是什么？", "reasons"),
        ("上诉人为什么提起上诉？", "reasons"),
        ("王巍是如何答辩的？", "defence"),
        ("被告的答辩意见是什么？", "defence"),
        ("原告的诉讼请求是否得到支持？", None),  # whether: retrieval.ruling_questions
        ("法院驳回张某某再审申请的理由是什么？", None),  # the court's reasons, not the applicant's
        ("原告李春华的其他诉讼请求如何处理？", None),  # what the court did with them
        ("袁仁友、袁敏公司决议撤销纠纷案中，袁仁友的上诉请求是什么？", "request"),  # 撤销 in a case's name
        ("原告要求被告赔偿多少钱？", None),  # a sum: a span
        ("法院判决结果是什么？", None),
    ],
)
def test_what_a_question_asks_of_a_party(question, part):
    assert party_part(question) == part


def _blocks(*blocks: tuple[str, str]) -> list[Passage]:
    return [Passage(f"d:{i}", "d", text, kind) for i, (kind, text) in enumerate(blocks)]


APPEAL = _blocks(
    ("PROCEDURE", "上诉人王甲因与被上诉人乙公司买卖合同纠纷一案，不服一审判决，向本院提起上诉。"),
    (
        "CLAIMS",
        "王甲上诉请求：1．撤销原判第一项；2．本案诉讼费由乙公司负担。事实和理由：一、一审认定事实错误。",
    ),
    ("CLAIMS", "二、退一步讲，货款已经付清。"),
    ("DEFENSE", "乙公司辩称，一审判决认定事实清楚，请求驳回上诉。"),
    ("DEFENSE", "原审被告丙某未到庭陈述意见。"),
    ("CLAIMS", "乙公司向一审法院起诉请求：判令王甲支付货款5000元。"),
    ("PROCEDURE", "一审法院认定事实：双方签订买卖合同。"),
)


def test_each_party_is_answered_from_its_own_paragraph():
    for question, answer, segments in [
        ("王甲的上诉请求是什么？", "1．撤销原判第一项；2．本案诉讼费由乙公司负担。", ["d:1"]),
        ("乙公司向一审法院提出了哪些诉讼请求？", "判令王甲支付货款5000元。", ["d:5"]),
        ("乙公司是如何答辩的？", "一审判决认定事实清楚，请求驳回上诉。", ["d:3"]),
        # the reasons after the requests, and the paragraph that goes on with them, not the next party's
        ("王甲的上诉理由是什么？", "一、一审认定事实错误。二、退一步讲，货款已经付清。", ["d:1", "d:2"]),
        (
            "上诉人的上诉请求是什么？",
            "1．撤销原判第一项；2．本案诉讼费由乙公司负担。",
            ["d:1"],
        ),  # a role alone
    ]:
        found = party_answer(question, party_part(question), APPEAL)
        assert (found.answer, [s for s, _ in found.units]) == (answer, segments), question
    # a party named who made no such request: no paragraph of another party answers for it
    assert party_answer("王甲向一审法院提出了哪些诉讼请求？", "request", APPEAL) is None
    # nor one named who said nothing: the judgment's parties tell a name from other words
    assert party_answer("丙某是如何答辩的？", "defence", APPEAL, ["王甲", "乙公司", "丙某"]) is None
    assert (
        party_answer("被上诉人是如何答辩的？", "defence", APPEAL, ["王甲", "乙公司", "丙某"]).units[0][0]
        == "d:3"
    )
    # a role alone names no party of a judgment that was only cited first
    assert party_answer("上诉人的上诉请求是什么？", "request", APPEAL, named_only=True) is None
    assert party_answer("王甲的上诉请求是什么？", "request", APPEAL, named_only=True) is not None


def test_a_paragraph_of_reasons_of_its_own_and_reasons_in_the_next_paragraph():
    own = _blocks(
        (
            "CLAIMS",
            "上诉人甲公司不服原审法院上述民事判决，向本院提起上诉称：原审认定事实不清，适用法律错误。",
        ),
        ("DEFENSE", "被上诉人乙公司未提交书面答辩状，在二审庭审中辩称：上诉人的主张无事实依据。"),
    )
    assert (
        party_answer("甲公司的上诉理由是什么？", "reasons", own).answer == "原审认定事实不清，适用法律错误。"
    )
    assert party_answer("乙公司如何答辩？", "defence", own).answer == "上诉人的主张无事实依据。"
    apart = _blocks(
        ("CLAIMS", "陈甲上诉请求：撤销一审判决，改判支持其一审诉讼请求。"),
        ("CLAIMS", "事实和理由：陈甲与章乙因产生矛盾，双方无法沟通。"),
        ("DEFENSE", "互通公司未提交答辩意见。"),
    )
    found = party_answer("陈甲的上诉理由是什么？", "reasons", apart)
    assert (found.answer, found.units[0][0]) == ("陈甲与章乙因产生矛盾，双方无法沟通。", "d:1")
    assert (
        party_answer("陈甲的上诉请求是什么？", "request", apart).answer
        == "撤销一审判决，改判支持其一审诉讼请求。"
    )


def test_a_claim_stated_at_the_end_of_an_account():
    """Older judgments give a party's account and its request at its end (原告诉称：…，故诉请法院判决：…)."""
    account = _blocks(
        ("CLAIMS", "原告甲公司诉称：2007年起原告分九次借款给被告乙公司。经多次催要，被告拒不偿还。"),
        ("CLAIMS", "据此，请求法院判令被告返还借款本金8650万元及利息，并承担本案诉讼费用。"),
        ("DEFENSE", "被告乙公司辩称：对原告起诉的事实予以认可，但暂时无力偿还。"),
        ("FACTS", "某市人民法院一审查明：2007年7月24日起，甲公司分九次借款给乙公司。"),
    )
    found = party_answer("甲公司的诉讼请求是什么？", "request", account)
    assert found.answer == "被告返还借款本金8650万元及利息，并承担本案诉讼费用。"
    assert [s for s, _ in found.units] == ["d:1"]
    assert (
        party_answer("乙公司是如何答辩的？", "defence", account).answer
        == "对原告起诉的事实予以认可，但暂时无力偿还。"
    )
    # an account that asks nothing of the court answers no request question
    told = _blocks(("CLAIMS", "原告甲公司诉称：2007年起原告分九次借款给被告乙公司。"))
    assert party_answer("甲公司的诉讼请求是什么？", "request", told) is None


@pytest.fixture(scope="module")
def judgments(shared_data, tmp_path_factory):
    read = clcr_blocks(shared_data, tmp_path_factory.mktemp("parties"), RECORDS)
    return {name: blocks for name, (blocks, _) in read.items()}


def test_parties_of_real_judgments(judgments):
    for name, question, start, end in [
        ("appeal", "余永根的上诉请求是什么？", "1、撤销一审判决，发回重审", "一、二审诉讼费由被上诉人负担。"),
        ("appeal", "余永根的上诉理由是什么？", "一、一审判决遗漏了周月新为上诉人代垫增资的重要事实", None),
        ("appeal", "德盛公司向一审法院提出了哪些诉讼请求？", "1．余永根立即补缴出资90万元", None),
        ("retrial", "李发启的再审请求是什么？", "（一）撤销杭州市萧山区人民法院", "游楷军、张剑飞负担。"),
        ("retrial", "张剑飞是如何答辩的？", "与巨芯公司的交易是游楷军个人做的生意", None),
        (
            "account",
            "欧宝公司的诉讼请求是什么？",
            "特莱维公司返还借款本金8650万元及利息",
            "承担本案诉讼费用。",
        ),
    ]:
        found = party_answer(question, party_part(question), judgments[name])
        assert found is not None and found.answer.startswith(start), question
        assert end is None or found.answer.endswith(end), question
    # the appellant's reasons go on over the paragraphs after his requests, up to the respondent's defence
    reasons = party_answer("余永根的上诉理由是什么？", "reasons", judgments["appeal"])
    assert "二、退一步讲" in reasons.answer and "三、一审法院对于2012年1月15日" in reasons.answer
    assert "德盛公司辩称" not in reasons.answer
