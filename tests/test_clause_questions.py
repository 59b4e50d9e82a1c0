"""Clause questions in `ldx ask`: which CUAD category a question names, and the shipped clause head's
likeliest sentences of one document for it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.paths import CLAUSE_HEAD
from retrieval.clause_questions import (
    CACHED_DOCS,
    CUES,
    ClauseAnswer,
    ClauseReader,
    answering_first,
    clause_category,
    clause_phrase,
)
from retrieval.hybrid import Passage
from retrieval.predict.clauses import ClauseHead

DEV = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "clause_questions_dev.json"


@pytest.fixture(scope="module")
def reader():
    return ClauseReader(ClauseHead.load(CLAUSE_HEAD))


def test_every_cue_names_a_category_of_the_shipped_head(reader):
    assert set(CUES) == set(reader.head.categories)


@pytest.mark.parametrize(
    ("question", "category"),
    [
        ("Which state's law governs this agreement?", "Governing Law"),
        ("Can the distributor assign its rights without consent?", "Anti-Assignment"),
        ("Which liabilities are excluded from the cap?", "Uncapped Liability"),
        ("Is there a cap on liability?", "Cap On Liability"),
        ("How much notice is needed to stop the agreement renewing?", "Notice Period To Terminate Renewal"),
        ("Does the agreement renew automatically?", "Renewal Term"),
        ("Can the licensee sublicense the software?", "Non-Transferable License"),
        ("Who are the parties to this agreement?", "Parties"),
        ("When was the contract signed?", "Agreement Date"),
        ("How long is the warranty period?", "Warranty Duration"),
        # a contract named by what it is: its name's words ask nothing
        ("Which law governs the non-competition and non-solicitation agreement?", "Governing Law"),
        ("When does the promotion agreement end?", "Expiration Date"),
        ("How long does the software license agreement remain in effect?", "Expiration Date"),
        ("When is the non-competition agreement dated?", "Agreement Date"),
    ],
)
def test_a_question_is_sent_to_the_category_it_names(question, category):
    assert clause_category(question) == category


@pytest.mark.parametrize(
    "question",
    [
        "What did the court decide on appeal?",
        "Who is responsible for shipping costs?",
        "How many shares are being purchased?",
        "What is the name of the escrow agent for the closing?",
        "被告人犯什么罪，判处什么刑罚？",
        "When does the Development Term end?",  # a term the contract defines, not its own
    ],
)
def test_other_questions_name_no_category(question):
    assert clause_category(question) is None


def test_the_dev_questions_the_cues_were_written_against_route_as_labelled():
    questions = json.loads(DEV.read_text(encoding="utf-8"))["questions"]
    assert {clause_category(q["question"]) for q in questions if q["category"] is None} == {None}
    assert all(clause_category(q["question"]) == q["category"] for q in questions if q["category"])


@given(st.text(max_size=200))
def test_any_text_gets_a_known_category_or_none(text):
    assert clause_category(text) in {*CUES, None}


def _contract(doc_id: str) -> list[Passage]:
    texts = [
        "SPONSORSHIP AGREEMENT\nThis Agreement is made between Acme Corp. and Beta LLC.",
        "12. Governing Law. This Agreement shall be governed by the laws of the State of Delaware. "
        "Neither party may assign this Agreement without the prior written consent of the other party.",
        "The Sponsor shall pay the fee within thirty days of the invoice.",
    ]
    return [Passage(f"{doc_id}:{i}", doc_id, t, "CLAUSE", "contract") for i, t in enumerate(texts)]


def test_the_likeliest_sentences_come_first_from_their_own_segments(reader):
    found = reader.answers("Governing Law", "d1", _contract("d1"), n=3)
    assert len(found) == 3
    assert [f.probability for f in found] == sorted((f.probability for f in found), reverse=True)
    best = found[0]
    assert best.segment_id == "d1:1" and "laws of the State of Delaware" in best.sentence
    assert best.probability >= 0.5 and best.answer == best.sentence
    assignment = reader.answers("Anti-Assignment", "d1", _contract("d1"), n=1)[0]
    assert assignment.sentence.startswith("Neither party may assign")
    assert reader.answers("No Such Category", "d1", _contract("d1")) == []
    assert reader.answers("Governing Law", "empty", []) == []


def test_documents_are_scored_once_and_the_cache_is_bounded(reader):
    reader._docs.clear()
    first = reader.answers("Governing Law", "d1", _contract("d1"))
    again = reader.answers("Governing Law", "d1", [])  # served from the cache: the passages are not read
    assert again == first
    for i in range(CACHED_DOCS + 3):
        reader.answers("Governing Law", f"x{i}", _contract(f"x{i}"))
    assert len(reader._docs) == CACHED_DOCS and "d1" not in reader._docs


def _found(answer: str, probability: float, parties: int) -> ClauseAnswer:
    return ClauseAnswer("Parties", "d:1", f"{answer} agree as follows.", answer, probability, parties)


def _sentence(segment_id: str, sentence: str, probability: float) -> ClauseAnswer:
    return ClauseAnswer("Non-Compete", segment_id, sentence, sentence, probability)


def test_the_likeliest_sentence_holding_the_answer_comes_first_above_the_bar():
    bar, who = 0.5, "Who are the parties?"
    one, both = _found("Newegg Inc.", 0.9, 1), _found("Newegg Inc. and Allied Esports, Inc.", 0.7, 2)
    found = answering_first([one, both], bar, lambda f: clause_phrase(who, f, True))
    assert found[0].answer == "Newegg Inc. and Allied Esports, Inc." and found[1] == one
    low = replace(both, probability=0.4)  # below the bar: the likeliest stays first
    assert answering_first([one, low], bar, lambda f: clause_phrase(who, f, True)) == [one, low]
    period = _sentence(
        "d:2",
        "Each Seller agrees that for a period ending two years after the Closing Date (the Non-Compete "
        "Period), it shall not compete.",
        0.6,
    )
    other = _sentence("d:3", "Gulf Oil shall not compete.", 0.8)
    ask = "How long does the non-compete period last?"
    first = answering_first([other, period], bar, lambda f: clause_phrase(ask, f, True))[0]
    assert first.segment_id == "d:2" and first.answer == "two years after the Closing Date"
    # typed phrases off: the sentence answers as the head ranks it
    assert answering_first([other, period], bar, lambda f: clause_phrase(ask, f, False))[0] == other
