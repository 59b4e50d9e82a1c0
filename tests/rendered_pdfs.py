"""Ground-truth PDFs: known paragraphs typeset with PyMuPDF under running headers, page footers
("Page N", "第N页 共M页"), footnotes, one or two columns, and paragraphs that run across pages; and
the fidelity of a parse against them (how many source paragraphs come back whole in one block).

`clauses=True` sets English paragraphs as a contract does: each opens with its number ("4.2", "(b)") at
the margin, its wrapped lines hang under its text, and no space parts one clause from the next."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import pymupdf

_ZH_CLAUSES = [
    "原告向本院提出诉讼请求",
    "被告辩称其已按约履行了付款义务",
    "本院经审理认定事实如下",
    "双方于二〇一九年三月签订借款合同",
    "约定借款金额为人民币十二万元",
    "被告未能按期归还借款本息",
    "原告多次催要未果",
    "上述事实有借款合同及转账凭证在卷佐证",
    "本院认为当事人应当按照约定全面履行自己的义务",
    "被告的抗辩意见缺乏事实和法律依据",
    "本院不予采纳",
    "依照相关法律规定判决如下",
    "案件受理费由被告负担",
    "如不服本判决可在判决书送达之日起十五日内提起上诉",
    "赡养人应当履行对老年人经济上供养的义务",
]
_EN_WORDS = (
    "the court held that plaintiff appellant defendant contract policy insurance coverage claim evidence "
    "district judgment review statute provision argument record motion dismiss affirm reverse remand "
    "standard whether because under which liability damages notice enrollment agreement party rights "
    "however moreover federal state interpretation finding officer testimony witness trial jury verdict"
).split()


@dataclass
class Rendered:
    path: Path
    paragraphs: list[str]  # body paragraphs and footnotes, as written
    pages: int


def _zh_paragraph(rng: random.Random) -> str:
    n = rng.randint(2, 12)
    return "，".join(rng.choice(_ZH_CLAUSES) for _ in range(n)) + "。"


def _en_paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(1, 7)):
        words = [rng.choice(_EN_WORDS) for _ in range(rng.randint(6, 22))]
        sentences.append(" ".join(words).capitalize() + rng.choice([".", ".", ".", ";", "?"]))
    return " ".join(sentences)


def _lines(
    text: str, font: pymupdf.Font, size: float, width: float, indent: float, cjk: bool, hang: float = 0.0
) -> list[str]:
    """Greedy line breaking: CJK at any character, Latin at spaces; the first line is indented by
    `indent`, the others by `hang`."""
    units = list(text) if cjk else text.split(" ")
    sep = "" if cjk else " "
    lines, cur = [], ""
    for u in units:
        room = width - (indent if not lines else hang)
        trial = cur + sep + u if cur else u
        if cur and font.text_length(trial, size) > room:
            lines.append(cur)
            cur = u
        else:
            cur = trial
    return [*lines, cur] if cur else lines


def _clause_number(rng: random.Random, n: int) -> str:
    return f"({'abcdefgh'[n % 8]})" if rng.random() < 0.3 else f"{n // 5 + 1}.{n % 5 + 1}"


def render(
    path: Path, language: str, seed: int, n_paragraphs: int = 40, columns: int = 1, clauses: bool = False
) -> Rendered:
    rng = random.Random(seed)
    cjk = language == "zh"
    fontname = "china-s" if cjk else "helv"
    font = pymupdf.Font(fontname)
    size, note_size, pitch = 11.0, 8.5, 15.0
    width, height, margin = 595.0, 842.0, 72.0
    gutter = 24.0
    col_w = (width - 2 * margin - (columns - 1) * gutter) / columns
    paras = [(_zh_paragraph if cjk else _en_paragraph)(rng) for _ in range(n_paragraphs)]
    if clauses:  # a contract's defined terms are capitalised wherever they stand (the Party, this Agreement)
        paras = [
            _clause_number(rng, n)
            + "".join(f" {w.title() if rng.random() < 0.3 else w}" for w in text.split())
            for n, text in enumerate(paras)
        ]
    hang = 3 * size if clauses else 0.0  # wrapped lines of a clause set in under its text
    indent = 0.0 if clauses else 2 * size
    doc = pymupdf.open()
    truth: list[str] = []
    pages: list[list[str]] = []  # each page's footnotes
    page, col, y, notes = None, 0, 0.0, []

    def new_page():
        nonlocal page, col, y, notes
        page = doc.new_page(width=width, height=height)
        notes = []
        pages.append(notes)
        col, y = 0, margin + 30

    def bottom() -> float:
        return height - margin - 20 - len(notes) * 2 * note_size * 1.3

    new_page()
    for text in paras:
        note = None
        if rng.random() < 0.15:
            note = (_zh_paragraph(rng) if cjk else _en_paragraph(rng))[:120].rstrip("，,;.。 ") + (
                "。" if cjk else "."
            )
        truth.append(text)
        # A note reserves room at the foot of the page its paragraph starts on, so only where nothing is
        # set there yet (the first column, above the reserve).
        if note is not None and col == 0 and y + pitch < bottom() - 2 * note_size * 1.3:
            notes.append(note)
            truth.append(f"{len(notes)} {note}")
        lines = _lines(text, font, size, col_w, indent, cjk, hang)
        for j, line in enumerate(lines):
            if y + pitch > bottom():
                if col + 1 < columns:
                    col, y = col + 1, margin + 30
                else:
                    new_page()
            x = margin + col * (col_w + gutter) + (indent if j == 0 else hang)
            page.insert_text((x, y), line, fontname=fontname, fontsize=size)
            y += pitch
        y += 0.0 if clauses else 0.4 * pitch  # paragraph spacing
    for n, notes in enumerate(pages, start=1):
        page = doc[n - 1]  # page objects of earlier pages go stale as pages are added
        header = "某某市人民法院民事判决书" if cjk else "Smith v. Jones Insurance Co., No. 21-50498"
        footer = f"第{n}页 共{len(pages)}页" if cjk else f"Page {n}"
        page.insert_text((margin, margin - 10), header, fontname=fontname, fontsize=9)
        page.insert_text((width / 2 - 20, height - margin + 30), footer, fontname=fontname, fontsize=9)
        y = height - margin - len(notes) * 2 * note_size * 1.3 + 4
        for k, note in enumerate(notes, start=1):
            for line in _lines(f"{k} {note}", font, note_size, width - 2 * margin, 0, cjk):
                page.insert_text((margin, y), line, fontname=fontname, fontsize=note_size)
                y += note_size * 1.3
    doc.save(path)
    doc.close()
    return Rendered(path, truth, len(pages))


_WS = re.compile(r"\s+")


def fidelity(truth: list[str], blocks: list[str]) -> tuple[float, float]:
    """(share of source paragraphs found whole inside one block, share of blocks holding parts of two or
    more source paragraphs). Whitespace is ignored on both sides."""
    units = [_WS.sub("", t) for t in truth]
    cells = [_WS.sub("", b) for b in blocks]
    whole = sum(any(u in c for c in cells) for u in units)
    starts, pos = [], 0
    whole_text = "".join(units)
    for u in units:
        starts.append(pos)
        pos += len(u)
    merged = 0
    for c in cells:
        at = whole_text.find(c) if c else -1
        if at >= 0 and any(at < s < at + len(c) for s in starts):
            merged += 1
    return whole / max(len(units), 1), merged / max(len(cells), 1)
