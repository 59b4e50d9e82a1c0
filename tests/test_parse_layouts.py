"""JSONL records without a text field, read through the structured layout they are in
(`pipeline.parsing.layouts`): the shared EWCA judgments, PatentsView grants and rhetorical-role judgments,
typed where the layout says what a part is; a broken record of a known layout is one clear error."""

from __future__ import annotations

import gzip
import itertools
import json

from test_parse_text import check_contract

from pipeline.config import ParseConfig
from pipeline.parsing import iter_documents
from pipeline.records import BlockType as T
from pipeline.records import DocKind
from txl.corpora import DEFAULT_CORPORA, iter_records

EWCA = "en/judgments/uk_ewca_2020.jsonl.gz"
GRANTS = "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"


def _first_records(path, n: int) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, n)]


def _write(path, records: list) -> None:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")


def test_shared_ewca_file_gives_its_judgments(shared_data):
    """The real file, as `ldx run` reads it: cover lines typed HEADER/PARTIES, numbered paragraphs typed
    by the judgment rules, the citation and date as the record states them."""
    path = shared_data / EWCA
    records = _first_records(path, 3)
    errors: list = []
    docs = list(itertools.islice(iter_documents(path, ParseConfig(), errors), 3))
    assert not errors and len(docs) == 3
    for doc, record in zip(docs, records, strict=True):
        check_contract(doc)
        assert doc.kind is DocKind.EN_JUDGMENT and doc.language == "en"
        assert doc.title == record["name"] and doc.meta.citation == record["cite"]
        assert doc.meta.date.isoformat() == record["date"]
        assert doc.meta.judges and len(doc.meta.parties) >= 2
        cover = [b for b in doc.blocks if b.type in (T.HEADER, T.PARTIES)]
        assert len(cover) >= len(record["header_lines"]) // 2
        assert {b.type for b in cover} == {T.HEADER, T.PARTIES}
        body = doc.blocks[len(cover) :]
        assert len(body) == len(record["paragraphs"])
        first = record["paragraphs"][0]
        assert body[0].text == f"{first['num']} {first['text']}".strip()
        assert {b.type for b in body} & {T.FACTS, T.OPINION, T.VERDICT}


def test_ewca_layout_unit(tmp_path):
    record = {
        "cite": "[2020] EWCA Civ 9",
        "date": "2020-03-04",
        "name": "Alpha Ltd v Beta Council",
        "header_lines": [
            "Neutral Citation Number: [2020] EWCA Civ 9",
            "Before :",
            "LORD JUSTICE GREEN",
            "Between :",
            "ALPHA LIMITED",
            "Appellant",
            "- and -",
            "BETA COUNCIL",
            "Respondent",
        ],
        "paragraphs": [
            {"num": "1.", "text": "The facts are these. On 3 May 2018 the appellant entered into a lease."},
            {"num": "2.", "text": "For these reasons the appeal is dismissed."},
        ],
    }
    path = tmp_path / "ewca.jsonl"
    _write(path, [record])
    (doc,) = iter_documents(path)
    check_contract(doc)
    assert doc.meta.judges == ["LORD JUSTICE GREEN"]
    assert [(p.name, p.role) for p in doc.meta.parties] == [
        ("ALPHA LIMITED", "appellant"),
        ("BETA COUNCIL", "respondent"),
    ]
    types = {b.text: b.type for b in doc.blocks}
    assert types["LORD JUSTICE GREEN"] is T.HEADER and types["ALPHA LIMITED"] is T.PARTIES
    assert types["2. For these reasons the appeal is dismissed."] is T.VERDICT


def test_patent_layout_from_the_shared_grants(shared_data, tmp_path):
    """The first utility grant with an abstract: every part typed by what the record says it is."""
    record = next(
        r for r in _first_records(shared_data / GRANTS, 60) if r["abstract"] and len(r["claims"]) > 2
    )
    path = tmp_path / "grants.jsonl"
    _write(path, [record])
    (doc,) = iter_documents(path)
    check_contract(doc)
    assert doc.kind is DocKind.PATENT and doc.title == record["title"]
    assert doc.meta.patent_number == record["doc_number"]
    assert doc.blocks[0].type is T.HEADER and doc.blocks[1].type is T.ABSTRACT
    claims = [b for b in doc.blocks if b.type is T.CLAIM]
    assert len(claims) == len(record["claims"]) and claims[1].text.startswith("2.")
    assert doc.blocks[-1].type is T.CLAIM  # claims come last, as printed
    n_paragraphs = sum(len(s["paragraphs"]) for s in record["description_sections"])
    described = [b for b in doc.blocks if b.type not in (T.HEADER, T.ABSTRACT, T.CLAIM)]
    assert len(described) >= n_paragraphs
    labels = {s["label"] for s in record["description_sections"]}
    if "background" in labels:
        assert any(b.type is T.BACKGROUND for b in doc.blocks)


def test_role_layout_unit(tmp_path):
    record = {
        "doc_id": "x",
        "sentences": [
            {"text": "The appellant bought the land in 1950.", "label": "Facts"},
            {"text": "Counsel for the appellant argued that the will was void.", "label": "Argument"},
            {"text": "The appeal is allowed.", "label": "Ruling by Present Court"},
        ],
    }
    path = tmp_path / "roles.jsonl"
    _write(path, [record])
    (doc,) = iter_documents(path)
    assert [b.type for b in doc.blocks] == [T.FACTS, T.CLAIMS, T.VERDICT]
    assert doc.kind is DocKind.EN_JUDGMENT


def test_text_field_wins_over_a_layout(tmp_path):
    """`--text-field` still names the text: a record that has it is read as that text."""
    path = tmp_path / "both.jsonl"
    _write(path, [{"body": "One plain paragraph.", "paragraphs": "not read"}])
    (doc,) = iter_documents(path, ParseConfig(jsonl_text_field="body"))
    assert doc.text == "One plain paragraph."


def test_broken_layout_records_are_one_error_each(tmp_path):
    good = {"header_lines": [], "paragraphs": [{"num": "1.", "text": "The appeal is dismissed."}]}
    broken = [
        {"header_lines": [], "paragraphs": [{"num": "1.", "text": "Fine."}, {"num": "2."}]},
        {"title": "A widget", "claims": "1. A widget."},
        {"sentences": [{"text": "The appeal is allowed.", "label": "Obiter"}]},
        {"paragraphs": []},
    ]
    path = tmp_path / "mixed.jsonl"
    _write(path, [good, *broken, good])
    errors: list = []
    docs = list(iter_documents(path, errors=errors))
    assert len(docs) == 2
    messages = [str(e) for e in errors]
    assert len(messages) == 4
    for line_no, message in zip((2, 3, 4, 5), messages, strict=True):
        assert message.startswith(f"{path}:{line_no}: ") and "\n" not in message
    assert "paragraphs[1] has no string 'text'" in messages[0]
    assert "'claims' is not a list" in messages[1]
    assert "unknown role 'Obiter'" in messages[2]
    assert "no text" in messages[3]


def test_lm_corpora_read_the_layouts_as_the_parser_does(shared_data):
    """The language-model corpora (txl.corpora) read the same records into the same typed blocks."""
    for name in ("en_ewca", "en_patents"):
        corpus = next(c for c in DEFAULT_CORPORA if c.name == name)
        errors: list = []
        (index, doc), *_ = iter_records(corpus, shared_data, errors, wanted={0})
        parsed = next(iter_documents(shared_data / corpus.path))
        assert index == 0 and not errors
        assert doc.doc_id == parsed.doc_id and doc.text == parsed.text
        assert [(b.type, b.char_start) for b in doc.blocks] == [(b.type, b.char_start) for b in parsed.blocks]
