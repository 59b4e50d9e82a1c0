"""What a patent is about, its field and the problem it addresses (retrieval/patent_questions.py), read
from the abstract, the description's opening and the summary or background."""

from __future__ import annotations

import gzip
import json

import pytest

from pipeline.parsing import parse_file
from pipeline.parsing.layouts import read_grant
from retrieval.hybrid import Passage
from retrieval.patent_questions import patent_answer, patent_part


def _patent(*blocks: tuple[str, str]) -> list[Passage]:
    return [Passage(f"p:{i}", "p", text, kind, "patent") for i, (kind, text) in enumerate(blocks)]


PATENT = _patent(
    ("HEADER", "Folding kebab rack"),
    ("ABSTRACT", "A rack holds skewers over an oven's heating element. It folds flat for storage."),
    (
        "BACKGROUND",
        "The present invention relates to cooking devices. More particularly, the invention relates to "
        "kebab racks for conventional ovens.",
    ),
    (
        "BACKGROUND",
        "Racks sold today are bulky, and the skewers are connected as needed. Accordingly, there is a "
        "need for a rack that is easy to store.",
    ),
    ("SUMMARY", "An object of the present invention is to provide a rack that folds flat."),
    ("DESCRIPTION", "The problem of grease is solved by a tray. The rack is made of steel."),
    ("CLAIM", "1. A rack comprising skewers, wherein the rack relates to an oven."),
)


@pytest.mark.parametrize(
    ("question", "part"),
    [
        ("What is the patent about?", "about"),
        ("Summarize the invention.", "about"),
        ("What does this patent cover?", "about"),
        ("What is the field of the invention?", "field"),
        ("What does the present invention relate to?", "field"),
        ("What problem does the invention solve?", "problem"),
        ("What are the objects of the invention?", "problem"),
        ("What need does the patent address?", "problem"),
        ("What is the appeal about?", None),
        ("What does claim 1 claim?", None),
    ],
)
def test_what_a_patent_question_asks(question, part):
    assert patent_part(question) == part


def test_a_patent_s_subject_field_and_object():
    about, kind, shown = patent_answer("What is the patent about?", PATENT)
    assert (about, kind) == ("A rack holds skewers over an oven's heating element.", "sentence")
    assert [s for _, s in shown] == [about, "It folds flat for storage."]
    field = patent_answer("What is the field of the invention?", PATENT)
    assert [s for _, s in field[2]] == [
        "The present invention relates to cooking devices.",
        "More particularly, the invention relates to kebab racks for conventional ovens.",
    ]
    # an object first; the need is shown only where no object is stated, the description's problem never
    problem = patent_answer("What problem does the invention solve?", PATENT)
    assert problem[0] == "An object of the present invention is to provide a rack that folds flat."
    without_object = [p for p in PATENT if p.block_type != "SUMMARY"]
    assert patent_answer("What problem does the invention solve?", without_object)[0] == (
        "Accordingly, there is a need for a rack that is easy to store."
    )


def test_a_judgment_or_a_silent_patent_is_left_to_the_search():
    judgment = [Passage("j:0", "j", "The present appeal relates to a lease.", "OPINION", "en_judgment")]
    assert patent_answer("What is the patent about?", judgment) is None
    silent = [p for p in PATENT if p.block_type in ("HEADER", "CLAIM", "DESCRIPTION")]
    assert patent_answer("What problem does the invention solve?", silent) is None


def test_a_shared_grant_s_field_and_object(shared_data):
    path = shared_data / "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        record = next(json.loads(line) for line in f if '"doc_number": "06839175"' in line)
    doc = read_grant(record)
    passages = [
        Passage(f"s{i}", "d", doc.text[s.start : s.end], s.type.value, "patent")
        for i, s in enumerate(doc.spans)
    ]
    field = patent_answer("What does the invention relate to?", passages)[0]
    assert field.startswith("The present invention relates to an image forming element")
    problem = patent_answer("What is the object of the invention?", passages)[2]
    assert [s[:40] for _, s in problem] == [
        "An object of the present invention is to",
        "A further object is to provide an image ",
    ]


def test_a_need_stated_as_existing_is_one():
    needs = _patent(
        ("BACKGROUND", "Racks are bulky. Consequently, a significant need exists for a rack that folds.")
    )
    assert patent_answer("What need does the invention address?", needs)[0] == (
        "Consequently, a significant need exists for a rack that folds."
    )


def test_a_grant_without_an_abstract_is_about_what_it_relates_to(shared_data):
    doc = parse_file(shared_data / "en/patents/ep_samples_go_epo_eps/grant/v1-0-B2-1.xml.gz")
    passages = [Passage(f"b{i}", "d", b.text, b.type.value, "patent") for i, b in enumerate(doc.blocks)]
    assert not any(p.block_type == "ABSTRACT" for p in passages)
    assert patent_answer("What is the patent about?", passages)[0].startswith(
        "The invention relates to a sliding bearing"
    )
