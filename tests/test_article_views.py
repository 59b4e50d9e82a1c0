"""What the judgment article head reads: the court's reasoning and sentence with every article reference
cut, on a written judgment, on generated references and on every criminal judgment the heads train on;
and the shipped heads, each on the cases it never saw."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pipeline.analysis.zh_numbers import cn_int
from pipeline.config import ParseConfig
from pipeline.parsing import build
from pipeline.parsing.text import from_text
from pipeline.paths import HEADS_DIR
from retrieval.predict.criminal import load_criminal
from retrieval.predict.facts import court_text, cut_references
from retrieval.predict.heads import ArticleHeads
from retrieval.predict.train import shipped_results

JUDGMENT = """上海市某区人民法院
刑事判决书
（2018）沪0105刑初1号
公诉机关上海市某区人民检察院。
被告人张某，男，1990年1月1日出生。
上海市某区人民检察院指控：2018年5月9日，被告人张某入户窃得被害人金项链一条。
上述事实，被告人张某在庭审过程中亦无异议，足以认定。
本院认为，被告人张某以非法占有为目的，入户盗窃他人财物，其行为已构成盗窃罪。被告人张某到案后如实供述，依照六十七条第三款可以从轻处罚。依照《中华人民共和国刑法》第二百六十四条、第六十七条第三款、第五十二条、第五十三条、第六十四条之规定，判决如下：
一、被告人张某犯盗窃罪，判处有期徒刑六个月，并处罚金人民币二千元。
二、责令被告人张某退赔违法所得。
如不服本判决，可在接到判决书的第二日起十日内提出上诉。
审判员李某
二〇一八年七月十六日
书记员王某
附：相关法律条文
第二百六十四条盗窃公私财物，数额较大的，处三年以下有期徒刑。
"""

_DIGITS = "零一二三四五六七八九"


def _cn(n: int) -> str:
    """An article number as a judgment writes it (264 → 二百六十四, 10 → 十, 307 → 三百零七)."""
    h, t, u = n // 100, n // 10 % 10, n % 10
    out = _DIGITS[h] + "百" if h else ""
    if t:
        out += ("" if t == 1 and not h else _DIGITS[t]) + "十"
    elif h and u:
        out += "零"
    return out + (_DIGITS[u] if u else "")


def test_court_text_keeps_the_findings_and_the_sentence_and_no_article():
    doc = build(from_text(JUDGMENT, "j"), "j", "0" * 16, ParseConfig())
    court = court_text(doc)
    for kept in ("构成盗窃罪", "如实供述", "并处罚金", "责令被告人张某退赔"):
        assert kept in court
    # no article number, no quoted article text, no appeal notice or signature
    for cut in ("二百六十四", "六十七", "五十二", "第六十四条", "附", "数额较大", "上诉", "审判员"):
        assert cut not in court, cut
    # the facts head reads none of it
    assert "构成盗窃罪" not in doc.blocks[0].text


@given(
    st.integers(1, 452),
    st.sampled_from(
        [
            "依照《中华人民共和国刑法》第{cn}条之规定",
            "根据刑法第{n}条第一款第（三）项",
            "依照{cn}条第三款的规定",
            "依照第{cn}条之一、第二十五条第一款、第{cn}条",
        ]
    ),
)
def test_every_article_reference_is_cut(n, form):
    cn = _cn(n)
    assert cn_int(cn) == n  # the helper writes numbers as the parser reads them
    if len(cn) < 2 and "第{cn}" not in form:
        cn = "第" + cn  # a lone numeral without 第 is a count (项链一条), not an article
    out = cut_references("被告人张某如实供述，" + form.format(cn=cn, n=n) + "，判决如下：")
    assert not re.search(rf"{cn}条|(?<![0-9]){n}条|款|项", out), out
    assert out.startswith("被告人张某如实供述，") and out.endswith("判决如下：")


def test_no_article_reaches_the_judgment_view_of_a_training_case(shared_data):
    cases = load_criminal(shared_data / "zh/judgments/judge_criminal.jsonl.gz", limit=60)
    assert all(c.court for c in cases)
    for c in cases:
        assert not re.search(
            r"第[零〇一二三四五六七八九十百千0-9]+条|[零〇一二三四五六七八九十百]{2,}条", c.court
        )
        assert c.text("judgment").startswith(c.facts) and c.text("facts") == c.facts


def test_shipped_heads_on_criminal_judgments_they_never_saw(shared_data):
    """Each clcr criminal judgment outside training read by the judgment head (articles: what its OPINION
    and VERDICT cite); the facts head alone scored micro-F1 0.639 on them (data/models/README.md)."""
    heads = ArticleHeads.load(HEADS_DIR)
    assert heads.judgment.reads == "judgment" and heads.facts.reads == "facts"
    cases = load_criminal(shared_data / "zh/judgments/clcr_cases.jsonl.gz")
    result = shipped_results(heads, cases)
    print(result)
    assert result["cases"] >= 50 and result["cases_by_view"] == {"judgment": result["cases"]}
    assert result["micro_f1"] >= 0.72
    facts_only = shipped_results(ArticleHeads(facts=heads.facts), cases)
    assert facts_only["micro_f1"] >= 0.62 and facts_only["cases_by_view"] == {"facts": result["cases"]}
