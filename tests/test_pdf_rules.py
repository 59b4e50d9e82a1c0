"""The PDF reader's layout rules one by one, on small PDFs made here with PyMuPDF and on hand-made
lines: page, column and line numbers told by their sequence, text that reads past a page number of a
plain-text printout, OCR specks, superscripts, off-centre columns, drawing sheets, small last lines."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pymupdf

from pipeline.config import ParseConfig
from pipeline.parsing import parse_file
from pipeline.parsing.cleanup import (
    filing_header,
    filing_stamp,
    furniture,
    key,
    mark_columns,
    running_numbers,
    stray,
)
from pipeline.parsing.layout import Line, Paragraph, continues, footnotes, is_rule, paragraphs
from pipeline.parsing.pdf import page_lines
from pipeline.parsing.reading import drawing_sheet, merge_rows, reading_order

NO_OCR = ParseConfig(ocr=False)
_BARE_NUMBER = re.compile(r"(?:^|\s)\d{1,2}(?:\s|$)")
_PROSE = (
    "the parties agree that the supplier shall deliver the goods to the buyer at the place named in the "
    "order and that the buyer shall pay the price within thirty days of the invoice being received by it"
).split()


def _words(n: int, start: int = 0) -> list[str]:
    return [_PROSE[(start + i) % len(_PROSE)] for i in range(n)]


def _wrap(words: list[str], per_line: int) -> list[str]:
    return [" ".join(words[i : i + per_line]) for i in range(0, len(words), per_line)]


def test_pleading_line_numbers_go_even_beside_the_text(tmp_path: Path):
    """Numbers 1-28 down the left of every page, an em from the text: a stack whose values rise."""
    doc = pymupdf.open()
    for p in range(2):
        page = doc.new_page(width=612, height=792)
        for n in range(1, 29):
            y = 70 + 23 * n
            page.insert_text((76 if n > 9 else 82, y), str(n), fontsize=12)
        lines = _wrap(_words(180, 5 * p), 12)
        for i, text in enumerate(lines):
            page.insert_text((108, 93 + 23 * i), text.capitalize() if i == 0 else text, fontsize=12)
    path = tmp_path / "pleading.pdf"
    doc.save(path)
    parsed = parse_file(path, NO_OCR)
    assert not any(_BARE_NUMBER.search(b.text) for b in parsed.blocks), [b.text[:60] for b in parsed.blocks]


def test_column_numbers_in_the_top_band_go(tmp_path: Path):
    """A patent's column numbers: "1" and "2" over the columns of the first page, "3" and "4" over the
    next, below the 9% margin; they count with the pages (twice a page)."""
    doc = pymupdf.open()
    for p in range(3):
        page = doc.new_page(width=557, height=818)
        page.insert_text((160, 100), str(2 * p + 1), fontsize=11)
        page.insert_text((400, 100), str(2 * p + 2), fontsize=11)
        for col, x in enumerate((60, 300)):
            for i, text in enumerate(_wrap(_words(200, 37 * p + col), 7)[:40]):
                page.insert_text((x, 125 + 14 * i), text, fontsize=9)
    path = tmp_path / "columns.pdf"
    doc.save(path)
    parsed = parse_file(path, NO_OCR)
    assert not any(re.match(r"\d\b", b.text) for b in parsed.blocks), [b.text[:30] for b in parsed.blocks]


def test_text_reads_past_the_page_number_of_a_plain_text_printout(tmp_path: Path):
    """A contract printed from plain text: its page numbers stand mid-page, on rows of their own, and a
    sentence runs on past them."""
    doc = pymupdf.open()
    for p in range(3):
        page = doc.new_page(width=595, height=842)
        lines = _wrap(_words(60, 11 * p), 10)
        for i, text in enumerate(lines[:3]):
            page.insert_text((50, 100 + 10 * i), text, fontsize=8)
        page.insert_text((200, 160), str(p + 1), fontsize=8)
        for i, text in enumerate(lines[3:]):
            page.insert_text((50, 200 + 10 * i), text, fontsize=8)
    path = tmp_path / "printout.pdf"
    doc.save(path)
    parsed = parse_file(path, NO_OCR)
    assert len(parsed.blocks) == 1, [b.text[:40] for b in parsed.blocks]
    assert not _BARE_NUMBER.search(parsed.blocks[0].text)
    assert [p for p, _ in parsed.blocks[0].spans] == [0, 1, 2]  # one box per page it covers


def _numbered_patent_page(path: Path) -> None:
    """A two-column scan of an old patent: line numbers every fifth line left of the first column
    (5-35) and right of the second, inside the page (only 50 and 65 read), a head row of page number
    and patent number under a "best available copy" stamp, and in the text numbered paragraphs ("5.",
    "10.") and a table whose cells are multiples of five."""
    doc = pymupdf.open()
    page = doc.new_page(width=557, height=818)
    page.insert_text((296, 50), "BEST AVAILABLE COPY", fontsize=12)
    page.insert_text((80, 84), "2", fontsize=9)
    page.insert_text((250, 84), "223,898", fontsize=9)
    body = iter(_wrap(_words(600), 7))
    for col, x in enumerate((70, 300)):
        for i in range(40):
            y = 120 + 12 * i
            if col == 0 and i in (8, 24):
                page.insert_text((x, y), f"{5 if i == 8 else 10}. " + next(body).capitalize(), fontsize=9)
            elif col == 1 and 30 <= i < 34:
                page.insert_text((x, y), "Fee for the item", fontsize=9)
                page.insert_text((x + 120, y), str((20, 5, 15, 10)[i - 30]), fontsize=9)
            else:
                page.insert_text((x, y), next(body), fontsize=9)
            number = i + 1 + 45 * col
            if number % 5 == 0 and (col == 0 and number <= 35 or number in (50, 65)):
                page.insert_text((45 if col == 0 else 460, y), str(number), fontsize=8)
    doc.save(path)


def test_line_numbers_in_fives_go_and_numbers_of_the_text_stay(tmp_path: Path):
    _numbered_patent_page(tmp_path / "patent.pdf")
    parsed = parse_file(tmp_path / "patent.pdf", NO_OCR)
    numbers = sorted(t for b in parsed.blocks for t in b.text.split() if t[0].isdigit())
    assert numbers == ["10", "10.", "15", "20", "223,898", "5", "5."], [b.text[:60] for b in parsed.blocks]


def test_running_numbers_keep_numbers_that_are_text():
    """A number with words beside it, or with nothing counting with it, stays."""
    page = [
        Line("section", 50, 100, 90, 110, 10),
        Line("12", 92, 100, 104, 110, 10),  # a run of its row's text
        Line("7", 300, 400, 306, 410, 10),  # alone mid-page, nothing counts with it
    ]
    assert running_numbers([page], [(612.0, 792.0)]) == [set()]


def test_stray_specks_and_orphaned_superscripts():
    lines = [
        Line("the quick brown fox jumps over the lazy dog", 50, 100, 400, 112, 10),
        Line("'", 200, 130, 202, 140, 4),  # a speck
        Line("I", 300, 150, 301, 160, 3),  # a sliver
        Line("st", 180, 100, 186, 106, 6),  # raised inside its line's extent: its place is lost
        Line("*", 420, 100, 424, 106, 6),  # a note mark is text
        Line("A", 50, 170, 58, 180, 10),  # a heading letter is text
    ]
    assert stray(lines) == {1, 2, 3}


def test_a_caption_column_of_asterisks_goes_and_note_marks_stay():
    lines = [
        Line("United States of America,", 72, 193, 217, 207, 14),
        *[Line("*", 302, y, 309, y + 14, 14) for y in (193, 210, 226, 242)],
        Line("* * *", 280, 400, 330, 414, 12),  # a section break
        Line("the court held that the claim fails.*", 72, 430, 400, 444, 12),
        Line("*", 72, 700, 76, 706, 6),  # a footnote's mark
    ]
    assert mark_columns(lines) == {1, 2, 3, 4}


def test_a_rule_parts_paragraphs_and_is_no_text():
    """Underscores under a court's name and above a case number: the heading and the number stay
    apart, as they were with the rule between them; a fill-in blank after a label is text."""
    assert is_rule("___________") and is_rule("- - - - - -") and is_rule("—————")
    assert not is_rule("Dated: __________") and not is_rule("* * *") and not is_rule("--")
    col = [
        Line("FOR THE EIGHTH CIRCUIT", 221, 96, 391, 110, 12),
        Line("___________", 267, 112, 345, 126, 12),
        Line("No. 07-1306", 271, 130, 341, 144, 12),
    ]
    assert [p.text for p in paragraphs([col])] == ["FOR THE EIGHTH CIRCUIT", "___________", "No. 07-1306"]
    foot = Paragraph("______________", (72, 700, 300, 712), False, 12.0, None, column_start=True)
    top = Paragraph("and so the appeal fails.", (72, 72, 540, 86), False, 12.0, None, column_start=True)
    assert not continues(foot, top, False)


def test_a_note_rule_opens_the_notes_and_a_signature_line_does_not():
    """A Supreme Court slip opinion's short rule over a note run on from the page before (it starts
    "allocation." and so has no mark); a judge's line over a name set right of the text is no note rule."""
    body = [
        Paragraph(" ".join(_words(60)), (156, 100 + 120 * i, 456, 200 + 120 * i), False, 11.0, 14.0)
        for i in range(4)
    ]
    rule = Paragraph("——————", (156, 589, 213, 600), False, 9.0, None)
    note = Paragraph(
        "allocation. As noted infra, " + " ".join(_words(30)), (156, 603, 456, 650), False, 9.0, 10.0
    )
    assert footnotes([body + [rule, note]], [792.0]) == [{4, 5}]
    signature = Paragraph("______________________________", (360, 624, 540, 637), False, 12.0, None)
    name = Paragraph(
        "James M. Dowd, Judge Angela T. Quigless, P.J., and", (72, 638, 475, 665), False, 12.0, 13.8
    )
    assert footnotes([body + [signature, name]], [792.0]) == [set()]


def test_a_filing_header_goes_whole_or_cut_and_a_caption_stays():
    """The header a court's filing system stamps on every page, as the text layer holds it and as OCR
    cuts it; a caption's case number and filing date are text."""
    assert filing_header("Case 2:15-md-02641-DGC Document 21321 Filed 11/25/20 Page 1 of 5", False)
    assert filing_header("Case: 20-1507 Document: 00117684624 Page:2", False)
    assert filing_header("Document: 00117684624", True) and not filing_header("Document: 00117684624", False)
    assert not filing_header("Case No. 3:20-cv-257", True)
    assert not filing_header("Filed: February 5, 2010", True)
    # OCR's readings of the same furniture on different pages still agree
    assert key("K2 INC. and K-2 CORPORATION，") == key("K2 INC. and K-2 CORPORATION,")
    top = [Line("Page | of 9", 278, 708, 334, 721, 12), Line(" ".join(_words(12)), 72, 100, 540, 112, 12)]
    assert furniture([top], [(612.0, 792.0)]) == [{0}]


def test_a_clerks_filing_stamp_goes_and_the_caption_beside_it_stays():
    """The Fifth Circuit's stamp in the top right corner, beside the court's name and the caption."""
    lines = [
        Line("United States Court of Appeals", 153, 72, 465, 101, 24),
        Line("United States Court of Appeals", 456, 105, 554, 115, 7),
        Line("Fifth Circuit", 486, 113, 523, 123, 7),
        Line("F I L E D", 480, 120, 531, 143, 16),
        Line("March 16, 2022", 462, 139, 549, 156, 12),
        Line("Lyle W. Cayce", 465, 161, 546, 177, 12),
        Line("Clerk", 490, 175, 521, 191, 12),
        Line("No. 21-50498", 271, 162, 344, 177, 13),
        Line("Plaintiff—Appellant,", 396, 240, 508, 256, 13),
    ]
    assert filing_stamp(lines, 792.0) == {1, 2, 3, 4, 5, 6}
    assert filing_stamp([replace(ln, y0=ln.y0 + 500, y1=ln.y1 + 500) for ln in lines], 792.0) == set()
    # as Tesseract reads the stamp's blackletter: FILED comes back "ee"; the Clerk line and its date tell it
    ocr = [replace(lines[3], text="ee")] + [ln for k, ln in enumerate(lines) if k != 3]
    assert filing_stamp(ocr, 792.0) == {0, 2, 3, 4, 5, 6}
    undated = [ln for ln in ocr if not ln.text.startswith("March")]
    assert filing_stamp(undated, 792.0) == set()  # a Clerk line with no date in its stack is text


def test_real_opinions_lose_their_rules_asterisks_and_stamps(shared_data):
    folder = shared_data / "en/judgments/us_opinions_pdf"
    for name in (
        "ca5_21-50498_opinion.pdf",
        "circuit_10thCircuit-06-6247.pdf",
        "circuit_8thCircuit-071306U.pdf",
    ):
        doc = parse_file(folder / name, NO_OCR)
        head = " ".join(b.text for b in doc.blocks[:12])
        assert "Clerk" not in head and "FILED" not in head, (name, head)
        assert not any(re.fullmatch(r"[_\s]+|[*\s]+", b.text) for b in doc.blocks), name
        assert "* *" not in doc.text and "___________" not in doc.text, name
    first = parse_file(folder / "ca5_21-50498_opinion.pdf", NO_OCR).blocks[0].text
    assert first.startswith("United States Court of Appeals for the Fifth Circuit"), first


def test_a_superscript_joins_its_row():
    row = [
        Line("due on October 1", 50, 102, 150, 114, 10),
        Line("st", 150.4, 100, 156, 107, 6),
        Line("of each year", 159, 102, 220, 114, 10),
    ]
    assert [ln.text for ln in merge_rows(row)] == ["due on October 1st of each year"]


def test_columns_split_at_the_gutter_of_an_off_centre_scan():
    """The columns of a scan sit right of the page's middle: the left one ends past it."""
    left = [Line(" ".join(_words(8, i)), 92, 100 + 12 * i, 310, 110 + 12 * i, 9) for i in range(20)]
    right = [Line(" ".join(_words(8, 50 + i)), 324, 100 + 12 * i, 543, 110 + 12 * i, 9) for i in range(20)]
    groups = reading_order(left + right, 557)
    assert [len(g) for g in groups] == [20, 20]
    assert groups[0][0].x0 == 92 and groups[1][0].x0 == 324


def test_drawing_sheets_are_one_block_with_a_box_each(tmp_path: Path):
    doc = pymupdf.open()
    page = doc.new_page(width=557, height=818)
    for i, text in enumerate(_wrap(_words(90), 10)):
        page.insert_text((60, 100 + 14 * i), text.capitalize() + "." if i == 8 else text, fontsize=10)
    for labels in (
        ["FIG. 1", "102", "104a", "(106", "108", "110"],
        ["FIG. 2", "202", "204", "m:", "206", "21o"],
    ):
        page = doc.new_page(width=557, height=818)
        for i, text in enumerate(labels):
            page.insert_text((80 + 61 * i, 200 + 83 * (i % 3)), text, fontsize=10)
    path = tmp_path / "sheets.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        assert not drawing_sheet(page_lines(pdf[0])) and drawing_sheet(page_lines(pdf[1]))
    parsed = parse_file(path, NO_OCR)
    sheets = [b for b in parsed.blocks if "104a" in b.text]
    assert len(sheets) == 1 and "21o" in sheets[0].text
    assert [p for p, _ in sheets[0].spans] == [1, 2]


def test_a_small_ocr_last_line_carries_on_its_paragraph():
    """An OCR'd text layer sizes "wire." by its x-height."""
    col = [
        Line("and logic devices often rely on magnetic mechanisms", 52, 226, 272, 240, 9.2),
        Line("in which the information is represented by the polarity", 52, 236, 271, 250, 9.1),
        Line("of magnetic domains stored in a sheet, hollow core or", 52, 248, 272, 260, 8.6),
        Line("wire.", 52, 261.8, 74, 268.6, 5.8),
    ]
    assert len(paragraphs([col])) == 1


def test_real_pleading_paper_loses_its_line_numbers(shared_data):
    doc = parse_file(shared_data / "en/judgments/us_opinions_pdf/azd_mdl15-02641_order.pdf", NO_OCR)
    first = [b.text for b in doc.blocks if b.page == 0]
    assert any(t.startswith("IN THE UNITED STATES DISTRICT COURT") for t in first), first
    assert not any(re.fullmatch(r"\d{1,2}", t) for t in first), first


def test_a_footnote_run_on_from_the_page_before_is_a_footnote():
    """Under the body, set smaller, starting in lower case: the rest of the last page's note."""
    body = " ".join(_words(40))
    page = [
        Paragraph(body.capitalize() + ".", (72, 100 + 80 * i, 540, 170 + 80 * i), False, 12.0, 14.0)
        for i in range(5)
    ]
    run_on = Paragraph(" ".join(_words(30, 3)) + ".", (72, 660, 540, 700), False, 10.0, 11.0)
    heading = Paragraph("B. Promissory Estoppel", (144, 568, 258, 584), False, 12.0, None)
    assert footnotes([page + [heading, run_on]], [792.0]) == [{6}]
    assert footnotes([page + [heading]], [792.0]) == [set()]
