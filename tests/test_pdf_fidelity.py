"""PDFs read as their readers see them: rendered ground truth (running heads, footers, footnotes, two
columns, paragraphs over page ends) comes back paragraph by paragraph; real PDFs lose their furniture
and keep paragraphs whole over page breaks; text is clean (ligatures, soft hyphens, hyphenation)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from rendered_pdfs import fidelity, render

from pipeline.config import ParseConfig
from pipeline.parsing import parse_file
from pipeline.parsing.layout import clean_line, join_lines
from pipeline.records import block_rows, to_table

NO_OCR = ParseConfig(ocr=False)


@pytest.mark.parametrize(
    "language, columns, clauses", [("zh", 1, False), ("en", 1, False), ("en", 2, False), ("en", 1, True)]
)
def test_rendered_paragraphs_come_back_whole(tmp_path, language, columns, clauses):
    r = render(tmp_path / "doc.pdf", language, seed=7, n_paragraphs=30, columns=columns, clauses=clauses)
    doc = parse_file(r.path, NO_OCR)
    whole, merged = fidelity(r.paragraphs, [b.text for b in doc.blocks])
    assert whole >= 0.97 and merged <= 0.03, (whole, merged)
    assert r.pages >= 3 and any(len(b.spans) == 2 for b in doc.blocks)  # a paragraph over a page end
    for b in doc.blocks:
        assert doc.text[b.char_start : b.char_end] == b.text
        assert (b.page, b.bbox) == b.spans[0] and [p for p, _ in b.spans] == sorted({p for p, _ in b.spans})
    assert "Page 2" not in doc.text and "第2页" not in doc.text and "No. 21-50498" not in doc.text
    table = to_table("blocks", block_rows(doc.blocks, "r"))
    assert table.schema.field("spans").type == pa.list_(
        pa.struct([("page", pa.int32()), ("bbox", pa.list_(pa.float32(), 4))])
    )


def test_ca5_opinion_reads_as_paragraphs(shared_data):
    doc = parse_file(shared_data / "en/judgments/us_opinions_pdf/ca5_21-50498_opinion.pdf", NO_OCR)
    assert "No. 21-50498" not in doc.text.split("Appellees.", 1)[1]  # the running head of pages 2 on
    assert "Document:" not in doc.text  # the filing stamp
    crossing = [b for b in doc.blocks if len(b.spans) > 1]
    assert len(crossing) >= 4
    assert any(
        b.text.startswith("Thereafter, the City began deducting") and "coverage." in b.text for b in crossing
    )
    notes = [i for i, b in enumerate(doc.blocks) if b.text.startswith("1 “Pending E of I”")]
    # page 3's footnote follows the paragraph that runs from page 3 on to page 4
    assert notes and [p for p, _ in doc.blocks[notes[0] - 1].spans] == [2, 3]


def test_zh_paragraphs_cross_page_ends(shared_data):
    doc = parse_file(shared_data / "zh/pdf/唐某纯诉陈某智、陈某勇等赡养纠纷案.pdf", NO_OCR)
    assert sum(len(b.spans) > 1 for b in doc.blocks) >= 3
    body = [b for b in doc.blocks if b.type != "APPENDIX"]
    for a, b in zip(body, body[1:], strict=False):
        if b.page > a.spans[-1][0]:  # a page end between them: the first one ended its paragraph
            assert a.text[-1] in "。：；）”" or len(a.text) < 40, (a.text[-30:], b.text[:30])


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("the \ufb01nding of \ufb02ow and e\ufb00ect", "the finding of flow and effect"),
        ("inter\xadnational\x07 law", "international law"),
        ("本院认为，被告人\u3000的行为", "本院认为，被告人的行为"),
        ("（二）当事人：", "（二）当事人："),  # full-width punctuation stays as written
        ("LAW\u037e CHOICE 10 \u2126 \uf900", "LAW; CHOICE 10 \u03a9 \u8c48"),  # canonical twins
    ],
)
def test_clean_line(raw, clean):
    assert clean_line(raw) == clean


@pytest.mark.parametrize(
    "a, b, joined",
    [
        ("an inter-", "national treaty", "an international treaty"),
        ("a self-", "executing clause", "a self-executing clause"),
        ("a court-", "appointed expert", "a court-appointed expert"),
        ("the Anti-", "Injunction Act", "the Anti-Injunction Act"),
    ],
)
def test_hyphenation_is_conservative(a, b, joined):
    assert join_lines(a, b) == joined


def test_contract_clauses_keep_their_hanging_lines(shared_data):
    """A numbered clause's wrapped lines are set in under its text and no space parts the clauses: the
    wrapped line is no new paragraph, and the next clause, back at the margin, is one."""
    pdf = (
        shared_data
        / "en/contracts/pdf/ExactSciencesCorp_20180822_8-K_EX-10.1_11331629_EX-10.1_Promotion Agreement.pdf"
    )
    texts = [" ".join(b.text.split()) for b in parse_file(pdf, NO_OCR).blocks]
    law = next(t for t in texts if t.startswith("9.10 Governing Law."))
    assert law.endswith("the State of New York, without regard to conflict of law principles thereof.")
    cause = next(t for t in texts if t.startswith("8.4 Termination Without Cause."))
    assert cause.endswith(
        "either Party may terminate this Agreement upon six (6) months prior written notice "
        "to the other Party."
    )
    assert any(t.startswith("8.5 Mutual Termination.") for t in texts)
