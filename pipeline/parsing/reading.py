"""Reading order on a page: visual rows, columns (found where the text leaves a gutter, not at the page's
middle: a scan sits off centre), cuts where removed furniture parted a column, and drawing sheets.

Works on plain `Line` records so the same code serves the PDF text layer and OCR output.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from pipeline.parsing.layout import CJK_CHAR, Line, Paragraph

# A word of a drawing's labels as often as of prose: "Sensor", "FIG", "MAIMAN" (not "286J", "(287", "m:").
_WORD = re.compile(r"^[A-Za-z][a-z]{2,}[.,;:]?$|^[A-Z]{3,}[.,;:]?$")


def merge_rows(lines: list[Line]) -> list[Line]:
    """Fragments of one visual row (separate text runs on one baseline; a superscript set higher and
    smaller, "1st", a note mark) become one line. A row is the lines whose vertical middle lies inside
    the band of its tallest line."""
    rows: list[list[Line]] = []
    for ln in sorted(lines, key=lambda ln: (ln.y0 + ln.y1) / 2):
        if rows and _in_band(max(rows[-1], key=lambda r: r.height), ln):
            rows[-1].append(ln)
        else:
            rows.append([ln])
    out: list[Line] = []
    for row in rows:
        merged: list[Line] = []
        for ln in sorted(row, key=lambda ln: ln.x0):
            prev = merged[-1] if merged else None
            if prev is not None and ln.x0 >= prev.x1 - 1 and ln.x0 - prev.x1 < 3 * max(prev.size, ln.size):
                merged[-1] = _joined(prev, ln)
            else:
                merged.append(ln)
        out.extend(merged)
    return out


def _in_band(tall: Line, ln: Line) -> bool:
    small, big = (ln, tall) if ln.height <= tall.height else (tall, ln)
    return big.y0 <= (small.y0 + small.y1) / 2 <= big.y1


def _joined(prev: Line, ln: Line) -> Line:
    cjk = CJK_CHAR.match(prev.text[-1:] or "a") or CJK_CHAR.match(ln.text[:1] or "a")
    # a superscript touching its word ("1" + "st") is part of it
    raised = min(prev.size, ln.size) < 0.8 * max(prev.size, ln.size) and ln.x0 - prev.x1 < 1.0
    sep = "" if cjk or raised else " "
    return Line(
        prev.text + sep + ln.text,
        prev.x0,
        min(prev.y0, ln.y0),
        ln.x1,
        max(prev.y1, ln.y1),
        max(prev.size, ln.size),
        True,
        prev.ocr or ln.ocr,
    )


def gutter(lines: list[Line], width: float) -> float:
    """The x between 35% and 65% of the page width that the fewest lines cross, the nearest to the
    middle among equals."""
    starts = sorted(ln.x0 for ln in lines)
    ends = sorted(ln.x1 for ln in lines)
    best = (len(lines) + 1, 0.0, width / 2)
    for k in range(35, 66):
        x = width * k / 100
        crossing = bisect_left(starts, x) - bisect_right(ends, x)  # x0 < x, less those with x1 <= x
        best = min(best, (crossing, abs(x - width / 2), x))
    return best[2]


def reading_order(lines: list[Line], width: float) -> list[list[Line]]:
    """Columns in reading order. Two-column pages read band by band (full-width lines cut bands):
    the left column of a band, then its right column."""
    lines = [ln for ln in lines if ln.horizontal and ln.text]
    if not lines:
        return []
    mid = gutter(lines, width)
    slack = 0.02 * width
    left = [ln for ln in lines if ln.x1 <= mid + slack]
    right = [ln for ln in lines if ln.x0 >= mid - slack]
    # Columns are lines of text, not the words of one justified line spread over the page.
    wide = 0.25 * width
    if sum(ln.x1 - ln.x0 >= wide for ln in left) < 5 or sum(ln.x1 - ln.x0 >= wide for ln in right) < 5:
        return [merge_rows(lines)]
    spanning = sorted(
        (ln for ln in lines if ln.x1 > mid + slack and ln.x0 < mid - slack), key=lambda ln: ln.y0
    )
    in_left = {id(ln) for ln in left}
    right = [ln for ln in right if id(ln) not in in_left]  # a narrow centred line reads with the left
    groups: list[list[Line]] = []
    bounds = [float("-inf"), *(ln.y0 for ln in spanning), float("inf")]
    after_spanning = False  # full-width lines with no column lines between them read as one region
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:], strict=False)):
        for side in (left, right):
            group = sorted((ln for ln in side if lo <= ln.y0 < hi), key=lambda ln: (ln.y0, ln.x0))
            if group and after_spanning and side is left and not any(lo <= ln.y0 < hi for ln in right):
                groups[-1].extend(group)  # the short last line of a full-width region, not a column
            elif group:
                groups.append(group)
                after_spanning = False
        if i < len(spanning):
            if after_spanning:
                groups[-1].append(spanning[i])
            else:
                groups.append([spanning[i]])
            after_spanning = True
    return groups


def split_at(groups: list[list[Line]], cuts: list[float]) -> list[list[Line]]:
    """Each column cut where removed furniture stood between two of its lines; the pieces read on as
    columns do (a paragraph may carry on past the cut)."""
    if not cuts:
        return groups
    out = []
    for group in groups:
        piece: list[Line] = []
        for ln in group:
            if piece and any(piece[-1].y0 < y < ln.y0 for y in cuts):
                out.append(piece)
                piece = []
            piece.append(ln)
        if piece:
            out.append(piece)
    return out


def drawing_sheet(lines: list[Line]) -> bool:
    """A page of figures: its lines are labels (at most one in ten runs to 25 characters), and fewer
    than 45% of its tokens are words."""
    if len(lines) < 3 or sum(len(ln.text) >= 25 for ln in lines) > 0.1 * len(lines):
        return False
    tokens = [t for ln in lines for t in ln.text.split()]
    return sum(bool(_WORD.match(t)) for t in tokens) < 0.45 * len(tokens)


def sheet_paragraph(lines: list[Line]) -> Paragraph:
    """A drawing sheet's labels as one paragraph, row by row: they are not prose to cut into paragraphs."""
    rows = merge_rows([ln for ln in lines if ln.text])
    return Paragraph(
        " ".join(ln.text for ln in rows),
        (
            min(ln.x0 for ln in rows),
            min(ln.y0 for ln in rows),
            max(ln.x1 for ln in rows),
            max(ln.y1 for ln in rows),
        ),
        any(ln.ocr for ln in rows),
        max(ln.size for ln in rows),
        None,
        column_start=True,
        drawing=True,
    )
