"""Questions about a patent's numbered claims (retrieval/claim_questions.py): a claim's text and the claim
tree, this against the USPTO grants' own claim markup; and the sentence cutter that keeps a numbered
paragraph or claim whole (retrieval.text.sentences). Texts written for these tests."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.parsing.layouts import read_grant
from retrieval.answer import question_kind
from retrieval.claim_questions import asked_claim, asks_tree, claim_tree, claim_tree_answer, states_claim
from retrieval.hybrid import Passage
from retrieval.sentence_rank import rank_sentences, with_dispositions
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


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which claims depend on claim 1?", "dependents"),
        ("List the claims that depend from claim 3.", "dependents"),
        ("What claim does claim 5 depend on?", "parents"),
        ("Which claim is claim 12 dependent on?", "parents"),
        ("What is the parent claim of claim 4?", "parents"),
        ("Does claim 9 depend on claim 1?", "depends"),
        ("Is claim 4 an independent claim?", "kind"),
        ("Which claims are independent?", "independents"),
        ("How many independent claims does the patent have?", "count"),
        ("How many claims are there?", "count"),
        ("What does claim 2 claim?", None),
        ("Which claims of the plaintiff were dismissed?", None),
    ],
)
def test_what_a_claim_tree_question_asks(question, kind):
    assert asks_tree(question) == kind


TREE = [Passage(sid, "p", text, btype) for sid, btype, text in CLAIMS] + [
    Passage("p:13", "p", "4. A method of closing a valve, comprising seating a ball.", "CLAIM"),
    Passage(
        "p:14",
        "p",
        "5. The method of claim 4 or the valve of any of claims 1 to 3, wherein it is dry.",
        "CLAIM",
    ),
]


@pytest.mark.parametrize(
    ("question", "answer", "shown"),
    [
        ("Which claims depend on claim 1?", "claims 2 and 5", ["p:11", "p:14"]),
        ("What claim does claim 3 depend on?", "claim 2", ["p:12"]),
        ("On which claim does claim 5 depend?", "claims 1, 2, 3 and 4", ["p:14"]),
        ("Does claim 3 depend on claim 1?", "YES", ["p:12"]),
        ("Does claim 3 depend on claim 4?", "NO", ["p:12"]),
        ("Is claim 4 an independent claim?", "YES", ["p:13"]),
        ("Is claim 2 a dependent claim?", "YES", ["p:11"]),
        ("Is claim 2 independent?", "NO", ["p:11"]),
        ("Which claims are independent?", "claims 1 and 4", ["p:10", "p:13"]),
        ("How many claims does the patent have?", "5 claims", ["p:14"]),
        ("How many independent claims does the patent have?", "2 independent claims", ["p:10", "p:13"]),
        ("Which claims depend on claim 5?", "none: no claim refers back to claim 5", ["p:14"]),
        ("What claim does claim 9 depend on?", "none: the patent has no claim 9", ["p:14"]),
    ],
)
def test_the_claim_tree_answers_from_the_claims_own_references(question, answer, shown):
    got, _, units = claim_tree_answer(question, TREE)
    assert got == answer
    assert [segment for segment, _ in units] == shown


def test_a_document_without_claims_is_left_to_the_search():
    assert (
        claim_tree_answer("How many claims are there?", [Passage("j:1", "j", OPINION[2], "OPINION")]) is None
    )


def test_the_claim_tree_agrees_with_the_uspto_markup(shared_data):
    path = shared_data / "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if r["appl_type"] == "utility"]
    claims = right = 0
    for record in records:
        doc = read_grant(record)
        passages = [
            Passage(f"s{i}", "d", doc.text[s.start : s.end], s.type.value) for i, s in enumerate(doc.spans)
        ]
        tree = claim_tree(passages)
        for c in record["claims"]:
            claims += 1
            found = tree.get(int(c["num"]))
            right += found is not None and set(found.parents) == {
                int(d.rpartition("-")[2]) for d in c["depends_on"]
            }
    # the markup misses a few references the wording makes ("as claimed in any one of claims 1 and 2 to 3")
    assert len(records) > 200 and right / claims >= 0.97
