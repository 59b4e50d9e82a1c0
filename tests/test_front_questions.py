"""A patent's front-page questions (retrieval/front_questions.py) where the patent is a structured record
(a PatentsView grant, whose text has no front page) and where it is a PDF (whose front page the parser reads):
the run's tables are written from the real shared files without the flow."""

from __future__ import annotations

import datetime as dt
import gzip
import json

from run_tables import write_run_tables

from retrieval.front_questions import FrontPages, asked_field, stated

GRANTS = "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"


def test_a_record_s_own_fields_answer_where_its_text_has_no_front_page(shared_data, tmp_path):
    with gzip.open(shared_data / GRANTS, "rt", encoding="utf-8") as f:
        line = next(line for line in f if '"doc_number": "07474764"' in line)
    record = json.loads(line)
    src = tmp_path / "in" / "07474764.jsonl"
    src.parent.mkdir()
    src.write_text(line, encoding="utf-8")
    doc, _ = write_run_tables(tmp_path / "out", src)
    fronts = FrontPages(tmp_path / "out")
    title = fronts.answer("title", doc.doc_id)
    assert title.text == record["title"]  # not "BACKGROUND OF THE INVENTION", the first heading
    assert doc.blocks[title.block_idx].text == record["title"]
    assert fronts.answer("filed", doc.doc_id).text == "2005-08-11"
    assert fronts.answer("granted", doc.doc_id).text == "2009-01-06"
    assert fronts.answer("number", doc.doc_id).text == "7,474,764"
    assert fronts.answer("inventors", doc.doc_id) is None  # the record names none


def test_a_pdf_s_front_page_still_answers_as_printed(shared_data, tmp_path):
    doc, _ = write_run_tables(tmp_path, shared_data / "en/patents/pdf/us-6285999-pagerank.pdf")
    fronts = FrontPages(tmp_path)
    assert fronts.answer("filed", doc.doc_id).text == "Jan. 9, 1998"
    assert fronts.answer("title", doc.doc_id).text == "METHOD FOR NODE RANKING IN A LINKED DATABASE"


def test_what_a_document_s_metadata_states():
    meta = {
        "doc_type": "patent grant",
        "patent_number": "US12345678B2",
        "date": dt.date(2025, 6, 3),
        "filing_date": None,
        "parties": [
            {"name": "Clara Westbrook", "role": "inventor"},
            {"name": "Tomas Leidecker", "role": "inventor"},
            {"name": "Riverstone Instruments Inc.", "role": "assignee"},
        ],
    }
    assert stated("Fluorescence sensor", meta) == {
        "title": "Fluorescence sensor",
        "number": "US12345678B2",
        "granted": dt.date(2025, 6, 3),
        "inventors": ["Clara Westbrook", "Tomas Leidecker"],
        "assignee": "Riverstone Instruments Inc.",
    }
    assert stated(None, None) == {}
    assert (
        stated("Fluorescence sensor", {**meta, "doc_type": "patent"}) == {}
    )  # a PDF's: its front page answers


def test_the_field_a_question_asks_for():
    assert asked_field("When did the patent issue?") == "granted"
    assert asked_field("What is the filing date of the patent?") == "filed"
    assert asked_field("What is the issue the invention addresses?") is None
