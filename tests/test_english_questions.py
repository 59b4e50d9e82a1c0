"""The English question set (tests/data/english_questions.json) holds what benchmarks/english_questions.py
needs: every question names a shared document, and every gold sentence is a sentence of that document as
`ldx run` segments it and `retrieval.answer.sentences` cuts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pipeline
from retrieval.answer import sentences

QUESTIONS = Path(__file__).parent / "data" / "english_questions.json"


@pytest.fixture(scope="module")
def spec() -> dict:
    return json.loads(QUESTIONS.read_text(encoding="utf-8"))


def test_the_question_set_is_whole(spec):
    questions = spec["questions"]
    assert len(questions) >= 30 and len({q["id"] for q in questions}) == len(questions)
    assert {q["doc"] for q in questions} == set(spec["documents"])  # every document is asked about
    for q in questions:
        assert q["question"].endswith("?") and q["gold"] and all(len(g) >= 20 for g in q["gold"]), q["id"]
    groups = {key.split("-")[0] for key in spec["documents"]}
    assert {"ewca", "cuad"} <= groups and groups - {"ewca", "cuad"}  # UK, CUAD and US documents


def test_every_gold_sentence_is_a_sentence_of_its_document(spec, shared_data):
    by_doc: dict[str, list[dict]] = {}
    for q in spec["questions"]:
        by_doc.setdefault(q["doc"], []).append(q)
    for key, questions in by_doc.items():
        doc = pipeline.parse(shared_data / spec["documents"][key])
        cut = {seg.text[a:b].strip() for seg in pipeline.segment(doc) for a, b in sentences(seg.text)}
        for q in questions:
            missing = [g[:60] for g in q["gold"] if g not in cut]
            assert not missing, (q["id"], missing)
