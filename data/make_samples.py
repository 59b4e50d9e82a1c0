"""Write the demo documents in data/samples/ as multi-page PDFs from the texts in data/sample_texts/.

The texts are fictional documents written for this project. The PDFs carry what real court and patent
PDFs carry and the parser must remove: a running header, a diagonal-free watermark line and page
numbers ("第N页 共M页" or "Page N of M"). Run: python data/make_samples.py
"""

from __future__ import annotations

from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
TEXTS = HERE / "sample_texts"
OUT = HERE / "samples"

PAGE = pymupdf.paper_rect("a5")
MARGIN_X, TOP, BOTTOM = 48, 64, 60
LINE_GAP, PARA_GAP = 1.45, 6

SAMPLES = {
    # name: (font, size, running header, footer template)
    "zh_criminal_judgment": ("china-s", 10.5, "江南省临川市青岚区人民法院", "第{n}页 共{m}页"),
    "zh_civil_judgment": ("china-s", 10.5, "江南省临川市望湖区人民法院", "第{n}页 共{m}页"),
    "en_appellate_judgment": (
        "helv",
        9.5,
        "Marlowe Freight Ltd v Bristow Anchor Insurance plc",
        "Page {n} of {m}",
    ),
    "patent": ("helv", 9.5, "US 12,345,678 B2", "{n}"),
}
WATERMARK = "LongDoc-XL 样例文书"


def _wrap(text: str, font: pymupdf.Font, size: float, width: float, cjk: bool) -> list[str]:
    """Greedy line breaking: per character for CJK text, per word for Latin text."""
    units = list(text) if cjk else text.split(" ")
    sep = "" if cjk else " "
    lines, line = [], ""
    for unit in units:
        candidate = unit if not line else line + sep + unit
        if font.text_length(candidate, fontsize=size) <= width or not line:
            line = candidate
        else:
            lines.append(line)
            line = unit
    if line:
        lines.append(line)
    return lines


def _layout(
    paragraphs: list[str], font: pymupdf.Font, size: float, cjk: bool
) -> list[list[tuple[float, float, str]]]:
    """Paragraphs to pages of (y, x indent, line) triples. Chinese body paragraphs open with a two-character
    indent, as court documents set them, so a paragraph that ends on a full line still reads as ended."""
    width = PAGE.width - 2 * MARGIN_X
    pages: list[list[tuple[float, float, str]]] = [[]]
    y = TOP
    for para in paragraphs:
        lines = [(0.0, line) for line in _wrap(para, font, size, width, cjk)]
        if cjk and len(para) > 12:
            first = _wrap(para, font, size, width - 2 * size, cjk)[0]
            lines = [(2 * size, first)] + [
                (0.0, line) for line in _wrap(para[len(first) :], font, size, width, cjk)
            ]
        for x, line in lines:
            if y + size > PAGE.height - BOTTOM:
                pages.append([])
                y = TOP
            pages[-1].append((y, x, line))
            y += size * LINE_GAP
        y += PARA_GAP
    return pages


def make_pdf(name: str) -> Path:
    fontname, size, header, footer = SAMPLES[name]
    text = (TEXTS / f"{name}.txt").read_text(encoding="utf-8")
    paragraphs = [p.strip() for p in text.splitlines() if p.strip()]
    font = pymupdf.Font(fontname)
    cjk = pymupdf.Font("china-s")
    pages = _layout(paragraphs, font, size, cjk=fontname == "china-s")
    doc = pymupdf.open()
    for n, lines in enumerate(pages, start=1):
        page = doc.new_page(width=PAGE.width, height=PAGE.height)
        # embed the fonts so that text widths in the file match the widths used for wrapping
        page.insert_font(fontname="body", fontbuffer=font.buffer)
        page.insert_font(fontname="cjk", fontbuffer=cjk.buffer)
        page.insert_text((MARGIN_X, 36), header, fontname="cjk", fontsize=8, color=(0.4, 0.4, 0.4))
        page.insert_text(
            (PAGE.width / 2 - 40, PAGE.height / 2),
            WATERMARK,
            fontname="cjk",
            fontsize=14,
            color=(0.85, 0.85, 0.85),
        )
        for y, x, line in lines:
            page.insert_text((MARGIN_X + x, y + size), line, fontname="body", fontsize=size)
        label = footer.format(n=n, m=len(pages))
        page.insert_text((PAGE.width / 2 - 20, PAGE.height - 30), label, fontname="cjk", fontsize=8)
    doc.set_metadata({"title": paragraphs[0], "producer": "LongDoc-XL data/make_samples.py"})
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.pdf"
    doc.subset_fonts()
    # deterministic bytes: no creation dates, so doc_ids stay stable across regenerations
    doc.save(path, garbage=4, deflate=True, no_new_id=True)
    return path


if __name__ == "__main__":
    for sample in SAMPLES:
        p = make_pdf(sample)
        print(p, pymupdf.open(p).page_count, "pages")
