"""Questions about a patent's numbered claims (retrieval/claim_questions.py), and the sentence cutter that
keeps a numbered paragraph or claim whole (retrieval.text.sentences). Texts written for these tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.answer import question_kind, rank_sentences, with_dispositions
from retrieval.claim_questions import asked_claim, states_claim
from retrieval.hybrid import Passage
from retrieval.text import sentences

CLAIMS = [
    ("p:9", "CLAIM", "What is claimed is:"),
    ("p:10", "CLAIM", "1. A valve comprising: a body; a seat; and a spring urging a ball against the seat."),
    ("p:11", "CLAIM", "2. The valve of claim 1, wherein the spring is a coil spring of stainless steel."),
    ("p:12", "CLAIM", "3. The valve of claim 2, wherein the ball is ceramic."),
]
OPINION = ("j:4", "OPINION", "The judge below held that the claim failed and dismissed the claim.")


@pytest.mark.parametrize(
    ("question", "n"),
    [
        ("What does claim 2 claim?", 2),
        ("What is claimed in claim 12?", 12),
        ("What is the scope of claim 1?", 1),
        ("What did the claimant claim?", None),
        ("Which claims depend on claim 1?", None),
    ],
)
def test_the_claim_asked_about_is_read_from_the_question(question, n):
    assert asked_claim(question) == n
    assert (question_kind(question) == "patent claim") == (n is not None)


def test_only_the_opening_of_that_claim_in_a_claims_block_states_it():
    assert states_claim(2, "CLAIM", CLAIMS[2][2])
    assert not states_claim(1, "CLAIM", CLAIMS[2][2])  # "of claim 1" inside claim 2
    assert not states_claim(2, "OPINION", "2. The appellant advances two grounds.")


def test_the_claim_asked_about_answers_even_when_the_search_cited_a_judgment():
    question = "What does claim 2 claim?"
    doc = [Passage(sid, "p", text, btype) for sid, btype, text in CLAIMS]
    passages = with_dispositions("patent claim", [], doc) + [OPINION]
    best = rank_sentences(question, passages, "patent claim")[0]
    assert best.segment_id == "p:11" and best.text.startswith("2. The valve of claim 1")


def test_a_numbered_paragraph_opens_a_sentence_but_a_cited_one_does_not():
    text = 'It excluded loss "caused by delay". 3. On arrival the ship was held. See para. 12. The rest.'
    got = [text[a:b] for a, b in sentences(text)]
    assert got == [
        'It excluded loss "caused by delay".',
        "3. On arrival the ship was held.",
        "See para. 12. The rest.",
    ]


def test_a_year_or_an_acronym_ends_a_sentence_but_an_initial_a_number_or_a_citation_does_not():
    text = (
        "She arrived in 2018. On 3 May the duty under the PSED. The U.S. Court, per J. Smith QC. He said: "
        "“32. Subject to this, it holds.”\n2.4. Treatment. Under WIS. STAT. § 66 it may. CLAIM NO. E30MA931"
    )
    assert [text[a:b] for a, b in sentences(text)] == [
        "She arrived in 2018.",
        "On 3 May the duty under the PSED.",
        "The U.S. Court, per J. Smith QC.",
        "He said: “32. Subject to this, it holds.”\n2.4. Treatment.",
        "Under WIS. STAT. § 66 it may.",
        "CLAIM NO. E30MA931",
    ]


@given(st.text(alphabet='abA .3"“\n', max_size=60))
def test_sentences_cover_the_text_in_order(text):
    cuts = sentences(text)
    assert all(a < b for a, b in cuts)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(cuts, cuts[1:], strict=False))
    assert "".join("".join(text[a:b].split()) for a, b in cuts) == "".join(text.split())  # all but spaces
