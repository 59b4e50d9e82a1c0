"""Page furniture: running headers and footers, page numbers, watermarks, pleading-paper line numbers and
line numbers printed every fifth line in a margin or gutter, a clerk's filing stamp, a caption's column
of asterisks. (Rules drawn with characters are no furniture: they part paragraphs, see
`layout.is_rule`, and are dropped once they have.)

A line is furniture when its text (digits ignored, so "Page 3" and "Page 4" agree) recurs on many pages
and its position says it is not body text: in the top or bottom margin (or the first or last line), at the same height on every
page, rotated, or tiled several times on one page. Page-number patterns in a margin go even when a
document is too short for repetition to show.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import defaultdict

from pipeline.parsing.layout import CJK_CHAR, Line

_DIGITS = re.compile(r"\d+")
_WS = re.compile(r"\s+")
_PAGE_NUMBER = re.compile(
    r"^(?:第\s*\d+\s*页(?:\s*[,，/]?\s*共\s*\d+\s*页)?|共\s*\d+\s*页\s*第\s*\d+\s*页|-?\s*\d{1,4}\s*-?|\d+\s*/\s*\d+"
    r"|page\s*:?\s*(?:\d+|[|Il])(?:\s*(?:of|/)\s*\d+)?|[-–—]\s*\d+\s*[-–—]|[ivxlc]{1,6})$",  # OCR reads a 1 as | or l
    re.IGNORECASE,
)
# A court's electronic filing header, whole or as OCR cuts it: "Case: 20-1507 Document: 00117684624",
# "Case 2:15-md-02641 Document 213 Filed 11/25/20 Page 1 of 5"; one field alone ("Document: 0011768")
# only with its colon, in the margin band.
_FILING_FIELD = re.compile(
    r"(?:Case|Document|Page|Date Filed|Filed|Entry ID|PageID)\s*(:|#|No\.)?\s*[\w./:#-]+(?:\s+of\s+\d+)?\s*",
    re.IGNORECASE,
)
_LINE_NUMBER = re.compile(r"^\d{1,2}$")
# A number standing for a page, a column or a line: "7", "- 16 -", "Page 2", "2/9"; never a roman numeral
# (section headings "I", "II" look the same).
_COUNTER = re.compile(r"^(?:page\s*:?\s*)?[-–—]?\s*(\d{1,4})\s*[-–—]?(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]{2}")
_STEP = 5  # line numbers printed beside the text: every fifth line
_MARKS = frozenset("*†‡§¶#")
_FILED = re.compile(r"^F\s?I\s?L\s?E\s?D$")
_CLERK = re.compile(r"^(?:Deputy )?Clerk(?: of(?: the)? Court)?$", re.IGNORECASE)
_DATE = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+\d{1,2},?\s+\d{4}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
)
BAND = 0.15  # fraction of the page height above or below which column and page numbers are looked for
MARGIN = 0.09  # fraction of the page height treated as top/bottom margin
SIDE = 0.13  # fraction of the page width treated as left/right margin (pleading line numbers)


def key(text: str) -> str:
    """What repeats of a line: no spaces, digits as #, compatibility forms folded (OCR sets a comma of
    an English caption as "，" on one page and "," on the next), lower case."""
    return _DIGITS.sub("#", _WS.sub("", unicodedata.normalize("NFKC", text))).lower()


def filing_header(text: str, in_band: bool) -> bool:
    """A court's electronic filing header: two of its fields or more, or one with its colon in the band."""
    fields = list(_FILING_FIELD.finditer(text))
    if not fields or sum(len(m.group()) for m in fields) != len(text):
        return False
    return len(fields) >= 2 or (in_band and fields[0].group(1) == ":")


def furniture(pages: list[list[Line]], sizes: list[tuple[float, float]]) -> list[set[int]]:
    """For each page, the indexes of its lines that are furniture."""
    n = len(pages)
    on_pages: dict[str, set[int]] = defaultdict(set)
    heights: dict[str, list[tuple[float, int]]] = defaultdict(list)
    per_page: list[dict[str, int]] = []
    keys: list[list[str]] = []
    for p, lines in enumerate(pages):
        counts: dict[str, int] = defaultdict(int)
        page_keys = [key(ln.text) for ln in lines]
        for k, ln in zip(page_keys, lines, strict=True):
            counts[k] += 1
            on_pages[k].add(p)
            heights[k].append((ln.y0 / max(sizes[p][1], 1.0), p))
        per_page.append(counts)
        keys.append(page_keys)
    need = max(2, -(-n * 2 // 5))  # on at least 40% of the pages (and two of them)
    drop: list[set[int]] = []
    for p, lines in enumerate(pages):
        w, h = sizes[p]
        out = set()
        # The first and last lines of a short page stand in for its margins.
        top = min((ln.y0 for ln in lines), default=0.0) + 1
        bottom = max((ln.y1 for ln in lines), default=0.0) - 1
        for i, (k, ln) in enumerate(zip(keys[p], lines, strict=True)):
            if not k:
                continue
            text = ln.text.strip()
            repeated = len(on_pages[k]) >= need
            in_margin = ln.y1 <= MARGIN * h or ln.y0 >= (1 - MARGIN) * h or ln.y0 <= top or ln.y1 >= bottom
            if in_margin and (_PAGE_NUMBER.match(text) or filing_header(text, ln.y1 <= MARGIN * h)):
                out.add(i)
            elif _LINE_NUMBER.match(text):
                # Bare numbers are body text (table cells) unless they run down a margin or the gutter.
                at_side = (
                    ln.x1 <= SIDE * w
                    or ln.x0 >= (1 - SIDE) * w
                    or abs((ln.x0 + ln.x1) / 2 - w / 2) < 0.03 * w
                )
                if at_side and (repeated or per_page[p][k] >= 5):
                    out.add(i)
            elif repeated and (
                in_margin
                or not ln.horizontal
                or per_page[p][k] >= 2
                or _at_one_height(heights[k], ln.y0 / h, need)
            ):
                out.add(i)
            elif not ln.horizontal and per_page[p][k] >= 2:
                out.add(i)  # a tiled watermark on a single page
        drop.append(out | stray(lines) | mark_columns(lines) | filing_stamp(lines, h))
    for p, found in enumerate(running_numbers(pages, sizes)):
        drop[p] |= found | line_numbers_in_fives(pages[p]) | lone_head(pages[p], sizes[p][1])
    return drop


def _at_one_height(seen: list[tuple[float, int]], y: float, need: int) -> bool:
    """Running heads sit at one height on the pages they run over (the first page, set differently, may
    hold the same words elsewhere); body lines that repeat do not."""
    return len({p for y2, p in seen if abs(y2 - y) < 0.01}) >= need


def stray(lines: list[Line]) -> set[int]:
    """Specks a text layer made by OCR leaves in gutters and drawings: up to three characters with no
    letter or digit (a lone quote, dash or bar), or one glyph far narrower than it is tall; and raised
    fragments with no place in their line. Note marks (*, †, §) are text."""
    out = set()
    for i, ln in enumerate(lines):
        text = ln.text.strip()
        if not text or len(text) > 3 or CJK_CHAR.search(text) or text in _MARKS:
            continue
        if (
            not any(c.isalnum() for c in text)
            or (len(text) == 1 and ln.x1 - ln.x0 < 0.2 * ln.height)
            or _inside(ln, lines)
        ):
            out.add(i)
    return out


def mark_columns(lines: list[Line]) -> set[int]:
    """A caption's column of asterisks, which parts the parties from the court below: three or more
    lines of one note mark alone, one above another. A lone note mark and a section break ("* * *")
    are text."""
    marks = [i for i, ln in enumerate(lines) if ln.text.strip() in _MARKS]
    out = set()
    for i in marks:
        ln = lines[i]
        column = [j for j in marks if abs(lines[j].x0 + lines[j].x1 - ln.x0 - ln.x1) < max(ln.size, 4.0)]
        if len(column) >= 3:
            out.add(i)
    return out


def filing_stamp(lines: list[Line], height: float) -> set[int]:
    """A clerk's stamp in the top band ("United States Court of Appeals / Fifth Circuit / FILED /
    March 16, 2022 / Lyle W. Cayce / Clerk"): the line FILED, or the line Clerk when a date stands in
    its stack (OCR reads a blackletter FILED as "ee"), and the lines stacked with it."""
    out: set[int] = set()
    for i, ln in enumerate(lines):
        text = ln.text.strip()
        filed = bool(_FILED.match(text))
        if not ((filed or _CLERK.match(text)) and ln.y1 <= 2 * BAND * height):
            continue
        stamp = _stack(lines, i)
        if filed or any(_DATE.search(lines[j].text) for j in stamp):
            out |= stamp
    return out


def _stack(lines: list[Line], i: int) -> set[int]:
    """Line `i` and the lines stacked with it: each centred within its width (and not three times
    wider) and less than two of its own heights from the one next to it."""
    ln = lines[i]
    x0, x1 = ln.x0 - ln.height, ln.x1 + ln.height
    stack = {i}
    grew = True
    while grew:
        grew = False
        for j, o in enumerate(lines):
            if j in stack or not x0 <= (o.x0 + o.x1) / 2 <= x1 or o.x1 - o.x0 > 3 * (x1 - x0):
                continue
            gap = min(max(o.y0 - lines[k].y1, lines[k].y0 - o.y1) for k in stack)
            if gap < 2 * max(o.height, 4.0):
                stack.add(j)
                grew = True
    return stack


def _inside(ln: Line, lines: list[Line]) -> bool:
    """A small raised fragment ("1st", a note mark) that the text layer set apart from its line and
    whose place inside that line is lost: it lies within a larger line's extent on the same row."""
    mid = (ln.y0 + ln.y1) / 2
    return any(
        o.size * 0.8 > ln.size and o.y0 <= mid <= o.y1 and o.x0 < ln.x0 and ln.x1 < o.x1
        for o in lines
        if o is not ln
    )


def running_numbers(pages: list[list[Line]], sizes: list[tuple[float, float]]) -> list[set[int]]:
    """Page, column and line numbers told by their sequence. A candidate is a bare number. It goes when
    it counts down its page in a stack (pleading paper, a patent's gutter, beside the text), or, with no
    word beside it on its row, when it sits in the top or bottom band or alone on its row and counts with the pages:
    it is its page's number, or another candidate a few pages off moves by the pages or by twice them
    (two column numbers a page), or one a unit off stands on its page or the next (a page number the
    text of a page printed from plain text runs past)."""
    found = [_counters(lines) for lines in pages]
    on_pages: dict[int, set[int]] = defaultdict(set)
    for p, cands in enumerate(found):
        for _, value, _, beside in cands:
            if not beside:
                on_pages[value].add(p)
    out = []
    for p, cands in enumerate(found):
        h = sizes[p][1]
        lines = pages[p]
        keep = _stacked(lines, [(i, value) for i, value, _, _ in cands])
        for i, value, alone, beside in cands:
            ln = lines[i]
            if beside:
                continue
            in_band = ln.y1 <= BAND * h or ln.y0 >= (1 - BAND) * h
            if (in_band or alone) and (
                (in_band and value == p + 1)
                or any(q in on_pages[value + d] for d in (-1, 1) for q in (p - 1, p, p + 1))
                or any(p + k in on_pages[value + m * k] for k in (-3, -2, -1, 1, 2, 3) for m in (1, 2))
            ):
                keep.add(i)
        out.append(keep)
    return out


def _counters(lines: list[Line]) -> list[tuple[int, int, bool, bool]]:
    """(index, value, alone on its row, a word beside it) of the lines that are a bare number."""
    out = []
    for i, ln in enumerate(lines):
        m = _COUNTER.match(ln.text.strip())
        if m is None:
            continue
        em = max(ln.size, 4.0)
        row = [
            o for j, o in enumerate(lines) if j != i and o.y0 < ln.y1 and o.y1 > ln.y0 and _same_row(ln, o)
        ]
        beside = any(
            _LETTERS.search(o.text) and o.x0 < ln.x1 + 0.8 * em and o.x1 > ln.x0 - 0.8 * em for o in row
        )
        out.append((i, int(m.group(1)), not row, beside))
    return out


def _same_row(a: Line, b: Line) -> bool:
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap > 0.5 * max(min(a.height, b.height), 1.0)


def _stacked(lines: list[Line], cands: list[tuple[int, int]]) -> set[int]:
    """Candidates in a column of at least three down the page whose values rise: each within an em
    of the one above it (centres) or half an em (right edges), so a skewed scan's gutter counts."""
    chains: list[list[tuple[Line, int, int]]] = []
    for i, value in sorted(cands, key=lambda c: lines[c[0]].y0):
        ln = lines[i]
        em = max(ln.size, 4.0)
        for chain in chains:
            last, last_value, _ = chain[-1]
            centred = abs(last.x0 + last.x1 - ln.x0 - ln.x1) < 2 * em
            if value > last_value and (centred or abs(last.x1 - ln.x1) < 0.5 * em):
                chain.append((ln, value, i))
                break
        else:
            chains.append([(ln, value, i)])
    return {i for chain in chains if len(chain) >= 3 for _, _, i in chain}


def line_numbers_in_fives(lines: list[Line]) -> set[int]:
    """Line numbers printed every fifth line beside the text (a patent's gutter, a statute's margin):
    bare multiples of five in one narrow band down the page with no text across them, two of them as
    far apart as their difference in lines at the text's line pitch. A number of the text (a table
    cell, a paragraph's number) seldom keeps that step; a band whose numbers between the fives keep it
    too counts every line, and `_stacked` tells those."""
    bare = _bare(lines)
    fives = [(i, v) for i, v in bare if v % _STEP == 0 and v > 0]
    if len(fives) < 2:
        return set()
    pitch = line_pitch(lines)
    if pitch is None:
        return set()
    out: set[int] = set()
    for band in _bands(lines, fives):
        on_step = _on_step(lines, band, pitch)
        if not on_step:
            continue
        anchor = next((i, v) for i, v in band if i in on_step)
        between = [
            (i, v) for i, v in bare if v % _STEP and any(_overlap_x(lines[i], lines[k]) for k in on_step)
        ]
        if not _on_step(lines, [anchor, *between], pitch):
            out |= on_step
    return out


def _on_step(lines: list[Line], cands: list[tuple[int, int]], pitch: float) -> set[int]:
    """The candidates that stand as far below another as their values differ, in lines of `pitch`
    (within half a line, and 3% more per line for a scan's drift)."""
    out = set()
    for i, v in cands:
        for j, u in cands:
            step = (lines[j].y0 - lines[i].y0) / pitch
            if u > v and abs(step - (u - v)) <= 0.5 + 0.03 * (u - v):
                out |= {i, j}
    return out


def _bare(lines: list[Line]) -> list[tuple[int, int]]:
    """(index, value) of the horizontal lines that are a bare number of up to three digits with no
    other line across them."""
    out = []
    for i, ln in enumerate(lines):
        text = ln.text.strip()
        if not (ln.horizontal and text.isdigit() and len(text) <= 3):
            continue
        if not any(j != i and _overlap_x(ln, o) and _same_row(ln, o) for j, o in enumerate(lines)):
            out.append((i, int(text)))
    return out


def _overlap_x(a: Line, b: Line) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1


def _bands(lines: list[Line], cands: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The candidates in narrow vertical bands: each within an em of its neighbour's centre across."""
    order = sorted(cands, key=lambda c: lines[c[0]].x0 + lines[c[0]].x1)
    bands: list[list[tuple[int, int]]] = []
    for c in order:
        ln = lines[c[0]]
        if bands:
            last = lines[bands[-1][-1][0]]
            if abs(last.x0 + last.x1 - ln.x0 - ln.x1) < 2 * max(ln.size, 4.0):
                bands[-1].append(c)
                continue
        bands.append([c])
    return [b for b in bands if len(b) >= 2]


def line_pitch(lines: list[Line]) -> float | None:
    """The median step from a line of text to the next one below it in its column; None with fewer
    than three such steps."""
    text = sorted((ln for ln in lines if ln.horizontal and _LETTERS.search(ln.text)), key=lambda ln: ln.y0)
    steps = []
    for k, a in enumerate(text):
        for b in text[k + 1 :]:
            if b.y0 - a.y0 > 3 * max(a.size, 4.0):
                break
            if b.y0 > a.y0 + 0.5 * a.height and _overlap_x(a, b):
                steps.append(b.y0 - a.y0)
                break
    return statistics.median(steps) if len(steps) >= 3 else None


def lone_head(lines: list[Line], height: float) -> set[int]:
    """A page number that OCR misread, or that counts with nothing else: a bare number in the top or
    bottom band with no word on its row and nothing beyond it towards the page edge, set off from the
    text by more than one and a half lines."""
    cands = [i for i, _ in _bare(lines) if lines[i].y1 <= BAND * height or lines[i].y0 >= (1 - BAND) * height]
    pitch = line_pitch(lines) if cands else None
    if pitch is None:
        return set()
    out = set()
    for i in cands:
        ln = lines[i]
        top = ln.y1 <= BAND * height
        row = [o for o in lines if o is not ln and _same_row(ln, o)]
        over = [o for o in lines if o is not ln and _overlap_x(ln, o) and not _same_row(ln, o)]
        outward = [o for o in over if (o.y1 <= ln.y0 if top else o.y0 >= ln.y1)]
        inward = [o.y0 - ln.y0 if top else ln.y0 - o.y0 for o in over if o not in outward]
        if (
            not any(_LETTERS.search(o.text) for o in row)
            and not outward
            and inward
            and min(inward) > 1.5 * pitch
        ):
            out.add(i)
    return out


def cuts(lines: list[Line], gone: set[int], height: float) -> list[float]:
    """Heights at which removed furniture stood on a row of its own with text above and below it in
    the same column (a page number of a document printed from plain text): the text reads on past
    them as it does past a page end."""
    kept = [ln for i, ln in enumerate(lines) if i not in gone]
    stamp = filing_stamp(lines, height)
    out = []
    for i in gone:
        ln = lines[i]
        if not ln.horizontal or i in stamp:
            continue  # a watermark crosses the text and a clerk's stamp stands beside it; neither parts it
        if any(o.y0 < ln.y1 and o.y1 > ln.y0 and _same_row(ln, o) for o in kept):
            continue
        over = [o for o in kept if o.x0 < ln.x1 and o.x1 > ln.x0]
        if any(o.y1 <= ln.y0 for o in over) and any(o.y0 >= ln.y1 for o in over):
            out.append(ln.y0)
    return sorted(out)
