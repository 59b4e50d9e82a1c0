"""Questions about a Chinese judgment's head and signature, answered from what the parser read there, with the
block that states the answer."""

from __future__ import annotations

import json

import pytest
from run_tables import write_texts

from retrieval.covers import Covers
from retrieval.zh_cover_questions import answer_zh_cover, zh_asked_part

WENSHU = "zh/judgments/wenshu_mixed.jsonl"
RECORDS = {"civil": "a3815f14", "criminal": "bb3d3370"}  # 杨斌 v. 王莹 and others; 王富贵 危险驾驶


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("本案由哪个法院审理？", ("court", None)),
        ("（2018）辽0191民初3105号案件的案号是什么？", ("number", None)),
        ("杨斌与王莹一案的案由是什么？", ("cause", None)),
        ("本案属于什么纠纷？", ("cause", None)),
        ("王富贵危险驾驶案的罪名是什么？", ("charge", None)),
        ("本案涉及哪些罪名？", ("charge", None)),
        ("杨某海犯什么罪？", None),  # of one defendant: the verdict's to answer
        ("本判决是哪一天作出的？", ("date", None)),
        ("裁判日期是什么时候？", ("date", None)),
        ("王富贵危险驾驶一审刑事判决书是什么时候宣判的？", ("date", None)),  # the title's 一审 is its own
        ("审判长是谁？", ("office", "审判长")),
        ("本案的书记员叫什么名字？", ("office", "书记员")),
        ("合议庭成员有哪些？", ("judges", None)),
        ("被上诉人是谁？", ("role", "被上诉人")),
        ("本案的被告人有哪些？", ("role", "被告人")),
        ("当事人有哪些？", ("parties", None)),
        ("可以向哪个法院上诉？", None),  # the court of appeal, not this one
        ("一审由哪个法院审理？", None),  # the court below
        ("判决生效后何时履行？", None),
        ("原告的委托诉讼代理人是谁？", None),  # an agent: the typed phrases' question
        ("原告是谁的儿子？", None),
        ("被告人以多少钱购买了赃车？", None),
    ],
)
def test_what_a_question_asks_of_a_judgments_head(question, asked):
    assert zh_asked_part(question) == asked


@pytest.fixture(scope="module")
def two_judgments(tmp_path_factory, shared_data):
    out = tmp_path_factory.mktemp("zh_covers")
    rows = [json.loads(line) for line in (shared_data / WENSHU).read_text(encoding="utf-8").splitlines()]
    texts = {name: next(r["text"] for r in rows if r["docid"].startswith(p)) for name, p in RECORDS.items()}
    ids, covers = write_texts(out, texts), Covers(out)
    return {name: covers.cover(doc_id, "zh_judgment") for name, doc_id in ids.items()}


def test_each_part_of_a_head_with_the_block_that_states_it(two_judgments):
    civil, criminal = two_judgments["civil"], two_judgments["criminal"]
    for cover, asked, text, printed in [
        (civil, ("court", None), "沈阳经济技术开发区人民法院", "沈阳经济技术开发区人民法院"),
        (civil, ("number", None), "（2018）辽0191民初3105号", "（2018）辽0191民初3105号"),
        (civil, ("cause", None), "机动车交通事故责任纠纷", "机动车交通事故责任纠纷"),
        (civil, ("date", None), "二〇一八年十月十七日", "二〇一八年十月十七日"),
        (civil, ("office", "审判长"), "陈睿", "陈"),  # "审　判　长　陈　　　…　睿"
        (civil, ("office", "人民陪审员"), "钱德锋、崔娜", "人民陪审员"),
        (civil, ("judges", None), "陈睿、钱德锋、崔娜", "审"),
        (civil, ("role", "原告"), "杨斌", "原告：杨斌"),  # the party's line, not the title naming him
        (criminal, ("charge", None), "危险驾驶罪", "危险驾驶"),
        (criminal, ("office", "审判长"), "张晓红（审判员）", "张晓红"),  # a judge sitting alone presides
        (criminal, ("role", "被告人"), "王富贵", "被告人王富贵"),
        (criminal, ("role", "公诉机关"), "丹江口市人民检察院", "丹江口市人民检察院"),
    ]:
        found = answer_zh_cover(cover, *asked)
        blocks = {idx: t for idx, _, t in cover.blocks}
        assert found.text == text and printed in blocks[found.block_idx], asked
        assert found.anchor in blocks[found.block_idx]  # the evidence sentence is found by the anchor
    parties = answer_zh_cover(civil, "parties", None).text
    assert (
        parties.startswith("杨斌（原告）；王莹、") and "唐东杰" not in parties
    )  # 法定代理人 acts for a party
    assert answer_zh_cover(criminal, "role", "原告") is None  # no one in that role
    assert answer_zh_cover(criminal, "cause", None).text == "危险驾驶"  # 案由 as the court site files it
