"""Page furniture: running headers and footers, page numbers, watermarks and pleading-paper line numbers.

A line is furniture when its text (digits ignored, so "Page 3" and "Page 4" agree) recurs on many pages
and its position says it is not body text: in the top or bottom margin (or the first or last line), at the same height on every
page, rotated, or tiled several times on one page. Page-number patterns in a margin go even when a
document is too short for repetition to show.
"""

from __future__ import annotations

import re
from collections import defaultdict

from pipeline.parsing.layout import Line

_DIGITS = re.compile(r"\d+")
_WS = re.compile(r"\s+")
_PAGE_NUMBER = re.compile(
    r"^(?:第\s*\d+\s*页(?:\s*[,，/]?\s*共\s*\d+\s*页)?|共\s*\d+\s*页\s*第\s*\d+\s*页|-?\s*\d{1,4}\s*-?|\d+\s*/\s*\d+"
    r"|page\s*:?\s*\d+(?:\s*(?:of|/)\s*\d+)?|[-–—]\s*\d+\s*[-–—]|[ivxlc]{1,6})$",
    re.IGNORECASE,
)
_LINE_NUMBER = re.compile(r"^\d{1,2}$")
MARGIN = 0.09  # fraction of the page height treated as top/bottom margin
SIDE = 0.13  # fraction of the page width treated as left/right margin (pleading line numbers)


def key(text: str) -> str:
    return _DIGITS.sub("#", _WS.sub("", text)).lower()


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
            if in_margin and _PAGE_NUMBER.match(text):
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
        drop.append(out)
    return drop


def _at_one_height(seen: list[tuple[float, int]], y: float, need: int) -> bool:
    """Running heads sit at one height on the pages they run over (the first page, set differently, may
    hold the same words elsewhere); body lines that repeat do not."""
    return len({p for y2, p in seen if abs(y2 - y) < 0.01}) >= need
