"""A question naming its document by what it is ("the consulting agreement") is asked of that document."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.hybrid import Passage
from retrieval.named_documents import HEAD_PASSAGES, DocumentNames
from retrieval.text import sentences

HEADS = {
    "sponsor": ["Exhibit 10.34", "EVENT SPONSORSHIP AGREEMENT", "This Event Sponsorship Agreement is made …"],
    "promo": [
        "COLOGUARD® PROMOTION AGREEMENT BY AND BETWEEN EXACT SCIENCES CORPORATION",
        "AND PFIZER INC.",
        "TABLE OF CONTENTS",
    ],
    "consult1": ["This Consulting Agreement (“Agreement”) is made by and between Driven Deliveries, Inc."],
    "consult2": ["CONSULTING\nAGREEMENT between Acme Corp. and Jane Roe"],
}


@pytest.fixture(scope="module")
def names():
    passages = [
        Passage(f"{doc}:{i}", doc, text) for doc, texts in HEADS.items() for i, text in enumerate(texts)
    ]
    # a name that only a later passage holds is not the document's title
    passages.append(Passage("promo:9", "promo", "the sponsorship agreement of a third party"))
    return DocumentNames(passages)


@pytest.mark.parametrize(
    "question, doc",
    [
        ("When does the sponsorship agreement expire?", "sponsor"),
        ("Which state's law governs the promotion agreement?", "promo"),
        ("Who are the parties to the Event Sponsorship Agreement?", "sponsor"),
        ("What is the term of the promotion agreement?", "promo"),
        ("How much is paid under the consulting agreement?", None),  # two documents share the name
        ("What is the term of the agreement?", None),  # names no document
        ("Who owns the license agreement?", None),  # no document holds the name
    ],
)
def test_the_one_document_a_question_names_is_found(names, question, doc):
    assert names.named(question) == doc


@given(st.text(max_size=80))
def test_any_question_names_one_known_document_or_none(names, question):
    assert names.named(question) in (None, *HEADS)


def test_only_a_documents_first_passages_are_its_head(names):
    assert len(HEADS["promo"]) == HEAD_PASSAGES and "sponsorship" not in names.heads["promo"]


def test_a_company_suffix_before_its_defined_name_ends_no_sentence():
    text = "made by Newegg Inc. (“Newegg”), a Delaware corporation. Mr. Hale signed for Newegg Inc. It ended."
    assert [text[a:b] for a, b in sentences(text)] == [
        "made by Newegg Inc. (“Newegg”), a Delaware corporation.",
        "Mr. Hale signed for Newegg Inc.",
        "It ended.",
    ]


def _passages(heads: dict[str, str]) -> list[Passage]:
    return [Passage(f"{doc}:0", doc, text) for doc, text in heads.items()]


def test_a_chinese_judgment_named_by_its_number_or_its_parties():
    heads = {
        "a": "河南省浚县人民法院\n民 事 判 决 书\n（2017）豫0621民初2700号\n原告：陈清立，男",
        "b": "湖北省丹江口市人民法院\n刑 事 判 决 书\n（2019）鄂0381刑初59号\n被告人王富贵",
        "c": "某某人民法院\n民 事 判 决 书\n（2018）辽0191民初3105号\n原告：杨斌",
    }
    parties = {
        "a": ["陈清立", "李红军", "中国平安财产保险股份有限公司"],
        "b": ["王富贵"],
        "c": ["杨斌", "中国平安财产保险股份有限公司"],
    }
    names = DocumentNames(_passages(heads), parties)
    assert names.named("(2017)豫0621民初2700号案件由哪个法院审理？") == "a"  # brackets aside
    assert names.named("（2019） 鄂0381刑初59号的审判长是谁？") == "b"
    assert names.named("陈清立与李红军一案的原告是谁？") == "a"
    assert names.named("王富贵危险驾驶案的罪名是什么？") == "b"
    assert names.named("中国平安财产保险股份有限公司是哪个案件的被告？") is None  # two cases share it
    assert names.named("（2020）京01民终1号案件的案由是什么？") is None  # no judgment of the run
    assert names.named("本案的案由是什么？") is None


def test_an_english_judgment_named_by_the_name_it_is_cited_by():
    titles = {
        "a": "Mortimer v. Baca",
        "b": "United States v. Vinton",
        "c": "United States v. Martin",
        "d": "St. Pierre v. Standard Ins. Co.",
    }
    names = DocumentNames(_passages(dict.fromkeys(titles, "opinion")), titles=titles)
    assert names.named("Did the Ninth Circuit reverse in Mortimer v. Baca?") == "a"
    assert names.named("Was the judgment affirmed in United States v. Vinton?") == "b"
    assert names.named("What is the docket number of the St. Pierre case?") == "d"
    assert names.named("Did the United States appeal?") is None  # names no case
    assert names.named("What did Baca argue?") is None  # a party's name alone names no case
