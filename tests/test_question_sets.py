"""The question sets (tests/data/english_questions.json, chinese_questions.json,
chinese_phrases_wenshu.json) hold what benchmarks/ask_questions.py needs: every question names a shared
document (a file, or a record of a JSONL file as `path#docid`), every gold sentence is a sentence of that
document as `ldx run` segments it and `retrieval.text.sentences` cuts it, and every gold phrase stands in
a gold sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pipeline
from benchmarks.ask_questions import input_file
from retrieval.text import sentences

DATA = Path(__file__).parent / "data"
SETS = {
    "english": DATA / "english_questions.json",
    "chinese": DATA / "chinese_questions.json",
    "wenshu": DATA / "chinese_phrases_wenshu.json",
}


@pytest.fixture(scope="module", params=sorted(SETS))
def spec(request) -> dict:
    return {"name": request.param, **json.loads(SETS[request.param].read_text(encoding="utf-8"))}


def test_the_question_set_is_whole(spec):
    questions = spec["questions"]
    assert len(questions) >= 20 and len({q["id"] for q in questions}) == len(questions)
    assert {q["doc"] for q in questions} == set(spec["documents"])  # every document is asked about
    # 驳回张某某的再审申请。 and 审判长王学雷 are whole answers
    shortest = 20 if spec["name"] == "english" else 6
    for q in questions:
        assert q["question"].endswith(("?", "？")), q["id"]
        assert q["gold"] and all(len(g) >= shortest for g in q["gold"]), q["id"]
        held = ["".join(g.split()) for g in q["gold"]]
        assert all(any(p in g for g in held) for p in q.get("answer", [])), q["id"]  # a phrase of a gold
    groups = {key.split("-")[0] for key in spec["documents"]}
    if spec["name"] == "english":
        assert {"ewca", "cuad"} <= groups and groups - {"ewca", "cuad"}  # UK, CUAD and US documents
    elif spec["name"] == "wenshu":  # whole judgments of 裁判文书网, records of one JSONL file
        assert groups == {"zh"} and all("#" in p for p in spec["documents"].values())
    else:  # rulings (.doc) and case digests (PDF)
        assert groups == {"zh"} and {Path(p).parent.name for p in spec["documents"].values()} == {
            "doc",
            "pdf",
        }


def test_every_gold_sentence_is_a_sentence_of_its_document(spec, shared_data, tmp_path):
    by_doc: dict[str, list[dict]] = {}
    for q in spec["questions"]:
        by_doc.setdefault(q["doc"], []).append(q)
    for key, questions in by_doc.items():
        # the document as the benchmark runs it (a record of a JSONL file on its own)
        doc = pipeline.parse(input_file(shared_data, spec["documents"][key], tmp_path))
        cut = {seg.text[a:b].strip() for seg in pipeline.segment(doc) for a, b in sentences(seg.text)}
        for q in questions:
            missing = [g[:60] for g in q["gold"] if g not in cut]
            assert not missing, (q["id"], missing)
