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
