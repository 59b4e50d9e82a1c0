"""Page geometry to paragraphs: reading order (columns), paragraph breaks and line joining.

Works on plain `Line` records so the same code serves the PDF text layer and OCR output.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from statistics import median

# Han, CJK punctuation and full-width forms: text in these scripts is written without spaces.
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
CJK_CHAR = re.compile(f"[{_CJK}]")
_HAN_GAP = re.compile(r"(?<=[\u3400-\u9fff])[ \t\u3000\xa0]+(?=[\u3400-\u9fff])")
_SPACES = re.compile(r"[ \t]{2,}")
_RULE = re.compile(r"^[_=~\-–—]{4,}$")  # a rule drawn with characters, spaces taken out


def _fold_table() -> dict[int, str]:
    """Ligatures and presentation forms (ﬁ → fi, Arabic/Hebrew presentation forms → letters) by their
    NFKC mapping, and characters that are another by canonical equivalence (U+037E Greek question
    mark → ";", CJK compatibility ideographs → unified ones, U+2126 ohm sign → omega) by their NFC
    mapping: what a reader sees and what OCR reads. Nothing else is normalised, so CJK full-width
    punctuation stays as written. Soft hyphens, zero-width marks, byte-order marks and control
    characters are dropped (tab → space)."""
    table: dict[int, str] = {
        cp: nfc
        # where the canonical singletons lie (all 1035 in Unicode 14); the whole code space took 0.3 s
        for lo, hi in ((0x0340, 0x2330), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
        for cp in range(lo, hi + 1)
        if unicodedata.decomposition(chr(cp))[:1] not in ("", "<")
        and len(nfc := unicodedata.normalize("NFC", chr(cp))) == 1
        and nfc != chr(cp)
    }
    for lo, hi in ((0xFB00, 0xFDFF), (0xFE70, 0xFEFE)):
        for cp in range(lo, hi + 1):
            folded = unicodedata.normalize("NFKC", chr(cp))
            if folded != chr(cp):
                table[cp] = folded
    for cp in (*range(0x00, 0x20), *range(0x7F, 0xA0), 0xAD, 0x200B, 0x2060, 0xFEFF, 0xFFFE, 0xFFFF):
        table[cp] = ""
    table[0x09] = " "
    return table


_FOLD = _fold_table()
# First halves that keep their hyphen when a line breaks after them: "self-|executing", "non-|party".
_COMPOUND_HEADS = frozenset(
    "self non co cross well ill all ex quasi pro half full long short high low first second third one two "
    "three four five six ten multi semi bi anti counter post pre de mid sub out over under vice so".split()
)
_COMPOUND_TAILS = frozenset(
    "based related owned term party time year old like type wide free level made appointed ordered approved "
    "specific friendly".split()
)
_LAST_WORD = re.compile(r"([A-Za-z]+)-$")
_FIRST_WORD = re.compile(r"[a-z]+")


@dataclass(slots=True)
class Line:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    horizontal: bool = True
    ocr: bool = False

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass(slots=True)
class Paragraph:
    text: str
    bbox: tuple[float, float, float, float]
    ocr: bool
    size: float  # the largest font size in it
    pitch: float | None  # median baseline step between its lines; None for one line
    # geometry against its column, for deciding whether it carries on a paragraph of the column before
    indented: bool = False  # first line set in from the column's left edge
    first_full: bool = False  # first line reaches the column's right edge
    last_full: bool = False  # last line reaches it (the paragraph may run on)
    column_start: bool = False  # the first paragraph of its column (or page)
    drawing: bool = False  # the labels of a drawing sheet, never part of a paragraph of prose


def clean_line(text: str) -> str:
    """One visual line: ligatures and presentation forms folded, control characters and soft hyphens
    dropped, no spaces between Han characters (PDF producers space out justified CJK text), no-break
    spaces as plain spaces."""
    text = _HAN_GAP.sub("", text.translate(_FOLD).strip())
    return _SPACES.sub(" ", text.replace("\xa0", " "))


def _hyphenated(a: str, b: str) -> bool:
    """A word split by the line break: a lower-case continuation, and not a compound whose hyphen is
    part of the word ("self-executing", "court-appointed")."""
    head = _LAST_WORD.search(a)
    tail = _FIRST_WORD.match(b)
    if head is None or tail is None:
        return False
    return head.group(1).lower() not in _COMPOUND_HEADS and tail.group() not in _COMPOUND_TAILS


def join_lines(a: str, b: str) -> str:
    """Join two consecutive lines of a paragraph: no space around CJK, hyphenation repaired."""
    if not a:
        return b
    if not b:
        return a
    if a[-1] == "-" and len(a) > 1 and a[-2].isalpha() and b[0].isalpha():
        return a[:-1] + b if _hyphenated(a, b) else a + b  # a compound keeps its hyphen, without a space
    if CJK_CHAR.match(a[-1]) or CJK_CHAR.match(b[0]):
        return a + b
    # a number broken after its group separator ("12,|860元"): in CJK text that comma is never a clause
    # break followed by a space; in English "2019,|2020" is ambiguous, so English keeps the space
    if a[-1] in ",." and len(a) > 1 and a[-2].isdigit() and b[0].isdigit() and CJK_CHAR.search(a[-24:]):
        return a + b
    return a + " " + b


def paragraphs(columns: list[list[Line]]) -> list[Paragraph]:
    """Lines of each column into paragraphs: break at a larger gap, a size change, an indented first
    line, or after a line that stops well short of the column's right edge."""
    out: list[Paragraph] = []
    for col in columns:
        if not col:
            continue
        pitches = [
            b.y0 - a.y0 for a, b in zip(col, col[1:], strict=False) if 0 < b.y0 - a.y0 < 3 * a.height + 1
        ]
        pitch = median(pitches) if pitches else None
        x_left = min(ln.x0 for ln in col)
        # the edge most lines reach: a few wider lines (a full-width footnote under one column) do not move it
        x_right = sorted(ln.x1 for ln in col)[(3 * len(col)) // 4]
        span = max(x_right - x_left, 1.0)
        cur: list[Line] = []
        first = len(out)
        for ln in col:
            if cur and _breaks(cur[-1], ln, pitch, x_left, x_right, span):
                out.append(_paragraph(cur, x_left, x_right))
                cur = []
            cur.append(ln)
        if cur:
            out.append(_paragraph(cur, x_left, x_right))
        out[first].column_start = True
    return out


def is_rule(text: str) -> bool:
    """A line that draws a rule with characters (under a court's name, between a caption and the
    opinion, above a judge's name): it parts paragraphs and is no text of its own."""
    return bool(_RULE.match("".join(text.split())))


def _breaks(prev: Line, ln: Line, pitch: float | None, x_left: float, x_right: float, span: float) -> bool:
    if is_rule(prev.text) or is_rule(ln.text):
        return True
    step = ln.y0 - prev.y0
    if step < -0.5 * prev.height:
        return True  # moved up: a new column or a new region
    if _open_end(prev.text) and ln.text[:1].islower() and _run_on_size(prev, ln):
        if pitch is None or step < 2.5 * pitch:
            return False  # a sentence carried on in lower case (a short line before a long word, a quote)
    if abs(ln.size - prev.size) > 1.2:
        return True
    if pitch is not None and step > 1.45 * pitch + 0.5:
        return True
    if pitch is None and ln.y0 - prev.y1 > 0.8 * prev.height:
        return True
    em = max(ln.size, 4.0)
    if ln.x0 - x_left > 1.2 * em and prev.x0 - x_left < 0.6 * em:
        return not _hangs(prev, ln, x_right, span)  # a first-line indent, or a clause's wrapped lines
    back = prev.x0 - x_left > 1.2 * em and ln.x0 - x_left < 0.6 * em  # back at the margin after a clause
    if back and _CLAUSE_MARK.match(ln.text) and not _open_end(prev.text):
        return True  # the next numbered clause
    return span > 20 * em and prev.x1 < x_right - _edge_slack(prev, span) - _carried(prev, ln)


def _hangs(prev: Line, ln: Line, x_right: float, span: float) -> bool:
    """Whether `ln`, set in from the margin that `prev` starts at, carries on `prev`: a numbered clause's
    wrapped lines hang under its text ("9.10 Governing Law. … the State of New | York, …"), while an
    indented first line follows a paragraph that ended, or stopped short of the edge."""
    full = prev.x1 >= x_right - _edge_slack(prev, span)
    opens = _open_end(prev.text) or _CLAUSE_MARK.match(prev.text)  # a clause's first line wraps on
    # a line in capitals set in under a sentence is its own: a court's "AFFIRMED.", a heading
    cased = _LOWER.search(prev.text) and _LOWER.search(ln.text)
    return full and bool(opens and cased) and not _CLAUSE_MARK.match(ln.text)


def _edge_slack(ln: Line, span: float) -> float:
    """How far short of the right edge a line may stop and still have wrapped: CJK text wraps at any
    character; Latin text wraps at words and leaves a ragged edge of up to a long word."""
    return 1.5 * max(ln.size, 4.0) if CJK_CHAR.match(ln.text[-1:]) else 0.25 * span


def _carried(prev: Line, ln: Line) -> float:
    """How much further short a CJK line may stop when what opens the next line could not end it: a mark
    that never starts a line (，。：” …; the typesetter takes the character before it down too) or a number
    or Latin word, which is not split (…赔偿医疗费等 | 254496.72元；…)."""
    if not (CJK_CHAR.match(prev.text[-1:]) or CJK_CHAR.match(ln.text[:1])):
        return 0.0  # Latin text: its ragged edge is `_edge_slack`'s
    em = max(prev.size, 4.0)
    marks = _NO_LINE_START.match(ln.text)
    if marks:
        return (len(marks.group()) + 1) * em
    word = _LATIN_RUN.match(ln.text)
    return len(word.group()) * _LATIN_ADVANCE * em if word else 0.0


# What CJK typesetting never starts a line with (closing marks and brackets, full-width and half-width)
_NO_LINE_START = re.compile(r"^[，。、；：？！）》」』】〕〉”’…％,.;:?!)\]]+")
_LATIN_RUN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.,%/-]*")
_LATIN_ADVANCE = 0.6  # a digit's or Latin letter's width in ems, about, in CJK fonts' Latin glyphs
# Sentence-final punctuation, possibly closed by quotes or brackets.
_CLOSED = re.compile(r"[.!?。！？;；:：…][\'\"’”)）\]】」』]*$")
# what opens a clause or a list item: 4.2, 12., (b), (iv), b), Section 3, a bullet
_CLAUSE_MARK = re.compile(
    r"^(\(?[a-zA-Z]{1,4}\)|\(?\d+(\.\d+)*[.)]?\s|(Section|SECTION|Article|ARTICLE)\s+\d|[•▪◦·\-–])"
)
_LOWER = re.compile(r"[a-z]")


def _near_size(a: float, b: float) -> bool:
    """Within a quarter: the text layer under a scan gives each OCR'd line its own size."""
    return abs(a - b) <= 0.25 * max(a, b)


def _run_on_size(prev: Line | Paragraph, nxt: Line | Paragraph) -> bool:
    """Sizes that allow `nxt` to carry on `prev`. A text layer made by OCR sizes a line by its glyphs,
    so a short last line without capitals or ascenders ("wire.", "tion.") comes out smaller."""
    if _near_size(prev.size, nxt.size):
        return True
    return len(nxt.text) <= 40 and 0.3 * prev.size <= nxt.size < prev.size


def _open_end(text: str) -> bool:
    return not _CLOSED.search(text.rstrip())


def _paragraph(lines: list[Line], x_left: float, x_right: float) -> Paragraph:
    text = ""
    for ln in lines:
        text = join_lines(text, ln.text)
    bbox = (
        min(ln.x0 for ln in lines),
        min(ln.y0 for ln in lines),
        max(ln.x1 for ln in lines),
        max(ln.y1 for ln in lines),
    )
    steps = [b.y0 - a.y0 for a, b in zip(lines, lines[1:], strict=False)]
    em = max(lines[0].size, 4.0)
    return Paragraph(
        text,
        bbox,
        any(ln.ocr for ln in lines),
        max(ln.size for ln in lines),
        median(steps) if steps else None,
        indented=lines[0].x0 - x_left > 1.2 * em,
        first_full=_full(lines[0], x_left, x_right),
        last_full=_full(lines[-1], x_left, x_right),
    )


def _full(ln: Line, x_left: float, x_right: float) -> bool:
    return ln.x1 >= x_right - _edge_slack(ln, x_right - x_left)


def continues(prev: Paragraph, nxt: Paragraph, indenting: bool) -> bool:
    """Whether `nxt`, the first paragraph of a column or page, carries on `prev`, the last of the one
    before (the break between them being the column's or page's end, not the paragraph's). `indenting`
    says whether the document marks its paragraphs by indenting their first lines."""
    if prev.drawing or nxt.drawing:
        return prev.drawing and nxt.drawing  # a run of drawing sheets is one block, a box per sheet
    if is_rule(prev.text) or is_rule(nxt.text):
        return False  # a rule parts what stands on either side of it
    if prev.ocr != nxt.ocr or not prev.text or not nxt.text:
        return False
    if _open_end(prev.text) and nxt.text[0].islower() and _run_on_size(prev, nxt):
        return True
    if abs(prev.size - nxt.size) > 1.2:
        return False
    if _open_end(prev.text):  # set in at the top: a new paragraph where first lines are indented, else
        # a clause's wrapped lines hanging under its text
        hangs = not indenting and bool(_LOWER.search(prev.text[-20:])) and not _CLAUSE_MARK.match(nxt.text)
        return (hangs or not nxt.indented) and (prev.last_full or bool(CJK_CHAR.match(prev.text[-1])))
    # a sentence ended at the foot: only a full line at the top that is not indented carries on
    return indenting and prev.last_full and not nxt.indented and nxt.first_full


# A lower-case word, not a list's letter ("a. A video game"): text run on from the page before.
_RUN_ON = re.compile(r"[a-z]{2,}\b(?![.)])")
_NOTE_MARK = re.compile(r"^(?:\d{1,3}|[*†‡§])\s*(?=[A-Z“\"(\[\u4e00-\u9fff])")


def footnotes(pages: list[list[Paragraph]], heights: list[float]) -> list[set[int]]:
    """Per page, the paragraphs that are footnotes: in the lower part of the page, opened by a note
    mark (or under the rule that parts notes from the body), and set smaller or tighter than the
    document's body text; what follows one on its page too."""
    body = [p for page in pages for p in page if p.pitch]
    if not body:
        return [set() for _ in pages]
    chars: dict[float, int] = {}
    for p in body:
        chars[round(p.size, 1)] = chars.get(round(p.size, 1), 0) + len(p.text)
    body_size = max(chars, key=chars.get)  # the size most of the text is set in
    body_pitch = median(p.pitch for p in body if round(p.size, 1) == body_size)

    def set_small(p: Paragraph) -> bool:
        return p.size <= body_size - 1.0 or bool(p.pitch and body_pitch and p.pitch < 0.75 * body_pitch)

    out = []
    for page, height in zip(pages, heights, strict=True):
        notes: set[int] = set()
        text_width = max((q.bbox[2] - q.bbox[0] for q in page), default=0.0)
        for i, p in enumerate(page):
            if notes and p.bbox[1] >= page[min(notes)].bbox[1]:
                notes.add(i)
            elif (
                i + 1 < len(page)
                and page[i + 1].bbox[1] > 0.5 * height
                and _note_rule(p, page[i + 1], text_width)
                and set_small(page[i + 1])
            ):
                notes.add(i)
            elif (
                p.bbox[1] > 0.5 * height
                and len(p.text) >= 25
                # opened by its mark, or a note run on from the page before (it starts in lower case)
                and (_NOTE_MARK.match(p.text) or (not notes and _RUN_ON.match(p.text)))
                and set_small(p)
            ):
                notes.add(i)
        out.append(notes)
    return out


def _note_rule(p: Paragraph, below: Paragraph, text_width: float) -> bool:
    """The short rule that parts the notes from the body: under half as wide as the page's text, at the
    left edge of the note below it (a judge's signature line stands over the name, right of the text)."""
    return (
        is_rule(p.text)
        and abs(p.bbox[0] - below.bbox[0]) < max(below.size, 4.0)
        and p.bbox[2] - p.bbox[0] < 0.5 * text_width
    )


Piece = tuple[int, Paragraph]  # (page, paragraph)


def flow(pages: list[list[Paragraph]], notes: list[set[int]]) -> list[tuple[list[Piece], bool]]:
    """The document's paragraphs in reading order, each as the pieces it was cut into by column and page
    ends, with whether it is a footnote. A footnote follows the paragraph it interrupts."""
    multi = [p for page in pages for p in page if p.pitch and not p.column_start]
    indenting = bool(multi) and 2 * sum(p.indented for p in multi) >= len(multi)
    out: list[tuple[list[Piece], bool]] = []
    held: list[tuple[list[Piece], bool]] = []  # footnotes waiting for the paragraph they interrupt to end
    last: list[Piece] | None = None
    for pno, page in enumerate(pages):
        for i, p in enumerate(page):
            if i in notes[pno]:
                held.append(([(pno, p)], True))
            elif last is not None and p.column_start and continues(last[-1][1], p, indenting):
                last.append((pno, p))
            else:
                out.extend(held)
                held = []
                last = [(pno, p)]
                out.append((last, False))
    out.extend(held)
    return out
