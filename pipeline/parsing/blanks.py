"""Fill-in blanks of a template ("made this _____ day of _________, 20___") found in the rendered page
that Tesseract read: it drops underscore runs, which a scan shows as thin horizontal strokes on the
baseline, so they are found here in the same greyscale image and handed back as underscore words of
the line they lie on. All geometry is in pixels of that image."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Protocol

import numpy as np

from pipeline.parsing.layout import CJK_CHAR

DARK = 128  # grey level below which a pixel is ink


class Box(Protocol):
    text: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(slots=True, frozen=True)
class Stroke:
    x0: int  # columns x0..x1-1
    x1: int
    y0: int  # rows y0..y1-1
    y1: int


@dataclass(slots=True, frozen=True)
class Blank:
    x0: int
    y0: int
    x1: int
    y1: int
    count: int  # underscores it stands for
    glue_left: bool  # touches the word before it ("20___"): part of that word, no space between
    glue_right: bool  # touches the word after it ("_____,")

    def overlaps(self, other: Blank) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1


def strokes(dark: np.ndarray, min_length: int, max_gap: int, max_thickness: int) -> list[Stroke]:
    """Horizontal strokes of a boolean image: in each row, runs of ink at least `min_length` long once
    gaps of up to `max_gap` pixels are bridged (a scan breaks an underscore run between its glyphs),
    and such runs of adjacent rows that overlap taken as one stroke, kept when it is at most
    `max_thickness` rows thick (a thicker one is a bar or a block of ink, not a blank's line)."""
    edges = np.diff(np.pad(dark, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    rows, starts = np.nonzero(edges == 1)
    ends = np.nonzero(edges == -1)[1]  # row-major like the starts, so the two pair up
    if rows.size == 0:
        return []
    first = np.ones(rows.size, dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (starts[1:] - ends[:-1] > max_gap)
    heads = np.flatnonzero(first)
    tails = np.append(heads[1:] - 1, rows.size - 1)
    runs = [
        (int(r), int(a), int(b))
        for r, a, b in zip(rows[heads], starts[heads], ends[tails], strict=True)
        if b - a >= min_length
    ]
    found: list[list[int]] = []  # [x0, x1, y0, y1] growing downwards
    for r, a, b in runs:  # in row order
        for s in found:
            if s[3] == r and a < s[1] and b > s[0]:
                s[0], s[1], s[3] = min(s[0], a), max(s[1], b), r + 1
                break
        else:
            found.append([a, b, r, r + 1])
    return [Stroke(*s) for s in found if s[3] - s[2] <= max_thickness]


def line_blanks(dark: np.ndarray, words: list[Box]) -> list[Blank]:
    """The blanks on one text line of `words` (its Tesseract words, in x order) in the page's ink
    mask `dark`: strokes on the line's baseline, clear of ink above them within the line and of the
    words' boxes, no farther from a word than a column gutter (1.5 word heights, where
    `tesseract._runs` cuts). A stroke that runs under a whole word is its underline, a table's border
    or a rule across the page, and adds nothing. Only lines Tesseract read are asked about, so a
    stroke on a line with no words (a signature line on its own, a rule between paragraphs) is left
    alone: a blank is put back only where there is text around it to say what it leaves open."""
    height = median(w.y1 - w.y0 for w in words)
    baseline = median(w.y1 for w in words)
    top = int(min(w.y0 for w in words))
    bottom = min(int(baseline + 0.5 * height) + 1, dark.shape[0])
    gap = max(1, round(0.2 * height))
    thickness = max(1, round(0.12 * (max(w.y1 for w in words) - top)))
    band = dark[top:bottom]
    low = max(int(baseline - 0.2 * height) - top, 0)  # blanks sit on the baseline, dashes above it
    out: list[Blank] = []
    for s in strokes(band[low:], max(2, round(height)), gap, thickness):
        s = Stroke(s.x0, s.x1, s.y0 + low, s.y1 + low)
        span = _clear_span(s, words)
        if span is None or span[1] - span[0] < max(2, round(height)):
            continue
        x0, x1 = span
        if band[: max(s.y0 - 1, 0), x0:x1].any(axis=0).mean() > 0.1:
            continue  # ink above it: letters Tesseract did not box, a border under text
        left = max((w.x1 for w in words if w.x1 <= x0), default=None)
        right = min((w.x0 for w in words if w.x0 >= x1), default=None)
        near = min(x0 - left if left is not None else np.inf, right - x1 if right is not None else np.inf)
        if near > 1.5 * height:
            continue
        count = max(1, round((x1 - x0) / _underscore_width(words)))
        glue_left = left is not None and x0 - left <= gap
        glue_right = right is not None and right - x1 <= gap
        out.append(Blank(x0, top + s.y0, x1, top + s.y1, count, glue_left, glue_right))
    return out


def _clear_span(s: Stroke, words: list[Box]) -> tuple[int, int] | None:
    """The stroke's columns outside the words' boxes, or None where it runs under a word (a word lies
    within it, or words cover over a fifth of it): a blank only touches a word at an end, where the
    scan joined its line to a glyph."""
    x0, x1 = s.x0, s.x1
    for w in words:
        if w.x1 <= s.x0 or w.x0 >= s.x1:
            continue
        if w.x0 >= s.x0 and w.x1 <= s.x1:
            return None
        if w.x0 < s.x0:
            x0 = max(x0, int(np.ceil(w.x1)))
        if w.x1 > s.x1:
            x1 = min(x1, int(w.x0))
    if x1 - x0 < 0.8 * (s.x1 - s.x0):
        return None
    return x0, x1


def _underscore_width(words: list[Box]) -> float:
    """Half an em (an underscore's advance in Times, 0.56 em in Arial, 0.6 in Courier), the em taken
    from the words' widths over what their characters take in a proportional font: capitals about
    0.68 em, lower case 0.45, digits and underscores 0.5, Han characters 1, other marks 0.33. On a
    Times page scanned at 200 dpi (8.2 pt type, a 34.2 px em at 300 dpi) this gave 34.9-36.6 px on
    lines of capitals and of lower case alike; one width per character would have counted the blanks
    of a line of capitals a quarter short."""
    ems = sum(_em_share(c) for w in words for c in w.text)
    return max(0.5 * sum(w.x1 - w.x0 for w in words) / max(ems, 1.0), 1.0)


def _em_share(c: str) -> float:
    if c.isupper():
        return 0.68
    if c.islower():
        return 0.45
    if c.isdigit() or c == "_":
        return 0.5
    return 1.0 if CJK_CHAR.match(c) else 0.33
