"""Verdict–facts consistency: few flags on real judgments, most perturbed copies caught, with evidence."""

from __future__ import annotations

import itertools
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline import load_documents
from pipeline.analysis import zh_numbers
from pipeline.analysis.consistency import _plus_months, check_document, cited_articles
from pipeline.analysis.perturb import measure, perturbed_copies, replace_span
from pipeline.config import ParseConfig
from pipeline.records import BlockType


@pytest.fixture(scope="module")
def criminal(shared_data):
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    return list(itertools.islice(load_documents(path, ParseConfig(jsonl_text_field="fd")), 80))


def test_false_positives_low_and_perturbations_detected(criminal):
    report = measure(criminal, seed=0)
    print(report)
    assert report["documents"] >= 70
    assert report["false_positive_rate"] <= 0.08
    det = report["detection"]
    assert det["name"]["copies"] >= 60 and det["name"]["rate"] >= 0.9
    assert det["charge"]["copies"] >= 60 and det["charge"]["rate"] >= 0.9
    assert det["amount"]["copies"] >= 5 and det["amount"]["rate"] >= 0.8
    # a custodial term swapped for another case's no longer fits the days the verdict says it runs
    assert det["term"]["copies"] >= 8 and det["term"]["rate"] >= 0.85


def test_term_and_its_days_must_agree(criminal):
    """judge_criminal's f1ce79f5… writes 即自2019年12月5日起至2010年10月2日止 for 有期徒刑十个月 (the end year
    is a slip for 2020): the one judgment of the first 80 whose term check fires as written."""
    fired = [(d.doc_id, f) for d in criminal for f in check_document(d) if f.check == "term_inconsistent"]
    assert [doc_id for doc_id, _ in fired] == ["f1ce79f5ded30b7f"]
    assert "2010年10月2日" in fired[0][1].message
    assert _plus_months(date(2019, 12, 5), 10) == date(2020, 10, 5)
    assert _plus_months(date(2020, 1, 31), 1) == date(2020, 2, 29)


def test_money_the_verdict_records_as_seized_is_not_flagged(criminal):
    doc = next(d for d in criminal if any(b.type == BlockType.VERDICT for b in d.blocks))
    verdict = next(b for b in doc.blocks if b.type == BlockType.VERDICT)
    for words, flagged in (("扣押在案的人民币98765元予以没收。", False), ("退赔被害人人民币98765元。", True)):
        copy = replace_span(doc, verdict.char_end - 1, verdict.char_end - 1, words)
        amounts = [f for f in check_document(copy) if f.check == "amount_absent" and "98765" in f.message]
        assert bool(amounts) == flagged, words


def test_flag_quotes_the_swapped_words(criminal):
    original, copy, edit = next(c for c in perturbed_copies(criminal[:20]) if c[2].kind == "name")
    flags = [f for f in check_document(copy) if f.check == "party_absent"]
    assert flags, "a defendant swapped in from another case must be flagged"
    s, e = flags[0].spans[0]
    assert copy.text[s:e] == edit.new
    assert not [f for f in check_document(original) if f.check == "party_absent"]


def test_cited_articles_stop_at_the_next_law():
    text = "依照《中华人民共和国刑法》第二百六十四条、第二十五条第一款、第六十七条第三款，《中华人民共和国刑事诉讼法》第二百零一条之规定"
    assert [a for a, _, _ in cited_articles(text)] == [264, 25, 67]


def _cn(n: int) -> str:
    """Chinese numeral of 0 <= n < 10**8, written the way judgments do (一万零五百, 十二)."""
    digits = "零一二三四五六七八九"
    if n == 0:
        return "零"

    def below_10k(k: int) -> str:
        out, zero = "", False
        for unit, value in (("千", 1000), ("百", 100), ("十", 10), ("", 1)):
            d, k = divmod(k, value)
            if d:
                out += ("零" if zero and out else "") + digits[d] + unit
                zero = False
            else:
                zero = True
        return out

    high, low = divmod(n, 10_000)
    text = (below_10k(high) + "万" if high else "") + (
        ("零" if high and low < 1000 else "") + below_10k(low) if low else ""
    )
    return text[1:] if text.startswith("一十") else text


@given(st.integers(min_value=0, max_value=10**8 - 1))
def test_chinese_numerals_read_back(n):
    assert zh_numbers.number(_cn(n)) == n


def test_amounts_match_across_spellings():
    values = {q.value for q in zh_numbers.amounts("退缴人民币3，000元，发还三千元，另计0.3万元")}
    assert values == {"3000.00"}
