"""PDF fidelity: paragraphs whole on rendered ground truth, broken joins and furniture left on the real PDFs.

    .venv/bin/python benchmarks/pdf_fidelity.py [--data ../shared/data] [--docs 4] [--paragraphs 40]

Rendered: `tests/rendered_pdfs.py` typesets known paragraphs (zh with the builtin china-s font, en in
one and two columns, and en as a contract's numbered clauses whose wrapped lines hang under their text,
with no space between clauses) under running headers, "Page N" / "第N页 共M页" footers and footnotes, with
paragraphs running over page ends. Printed per language: the share of source paragraphs found whole
inside one block and the share of blocks merging two, for the parser and for PyMuPDF's own block split
(the baseline). Real PDFs (text layers, OCR off): the broken-join rate (adjacent non-footnote blocks, the
first ending without sentence-final punctuation and the next starting in lower case, or the next opening
with a mark that starts no Chinese line: ：，。、；） …) and the furniture
lines left (lines repeating at one height in the page margins on 40% of pages, page numbers and filing
stamps, still a block or a block's first or last words, in a block whose box on that page reaches the
line's height). Also pages per second against raw `get_text`.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pymupdf

from pipeline.config import ParseConfig
from pipeline.parsing import parse_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the ground-truth renderer
from rendered_pdfs import fidelity, render  # noqa: E402

PDF_DIRS = ["zh/pdf", "en/judgments/us_opinions_pdf", "en/patents/pdf", "en/contracts/pdf"]
NO_OCR = ParseConfig(ocr=False)
_CLOSED = re.compile(r"[.!?。！？;；:：…]['\"’”)）\]】」』]*$")
_CJK_GOES_ON = re.compile(
    r"^[，。、；：？！）》」』”’]"
)  # closing marks: CJK typesetting starts no line with them
_STAMP = re.compile(r"^(?:Case|Appellate Case|USCA\d*\s+Case)\b.*\b(?:Document|Page)\b", re.IGNORECASE)
_PAGE_NO = re.compile(r"^(?:第\s*\d+\s*页.*|page\s*\d+(?:\s*of\s*\d+)?|-?\s*\d{1,3}\s*-?)$", re.IGNORECASE)


def rendered(out: Path, layout: str, docs: int, n_paras: int) -> dict[str, tuple[float, float]]:
    """`layout`: "zh", "en" or "en clauses" (numbered clauses with hanging lines, as contracts set them)."""
    language, clauses = layout.split()[0], layout.endswith("clauses")
    truth, ours, raw = [], [], []
    for i in range(docs):
        columns = 2 if language == "en" and i % 2 else 1
        path = out / f"{layout.replace(' ', '_')}{i}.pdf"
        r = render(path, language, seed=i, n_paragraphs=n_paras, columns=columns, clauses=clauses)
        truth.append(r.paragraphs)
        ours.append([b.text for b in parse_file(r.path, NO_OCR).blocks])
        with pymupdf.open(r.path) as pdf:
            raw.append([b[4] for page in pdf for b in page.get_text("blocks")])
    return {"parser": _pooled(truth, ours), "pymupdf blocks": _pooled(truth, raw)}


def _pooled(truth: list[list[str]], blocks: list[list[str]]) -> tuple[float, float]:
    scores = [(fidelity(t, b), len(t), len(b)) for t, b in zip(truth, blocks, strict=True)]
    whole = sum(w * n for (w, _), n, _ in scores) / sum(n for _, n, _ in scores)
    merged = sum(m * k for (_, m), _, k in scores) / sum(k for _, _, k in scores)
    return whole, merged


def real_pdfs(data: Path) -> list[Path]:
    out = []
    for d in PDF_DIRS:
        for path in sorted((data / d).iterdir()):
            if path.suffix.lower() == ".pdf":
                with pymupdf.open(path) as pdf:
                    if any(page.get_text().strip() for page in pdf):
                        out.append(path)
    return out


def furniture_candidates(pdf: pymupdf.Document) -> list[tuple[int, str, tuple[float, float]]]:
    """(page, text, its top and bottom) of margin lines that repeat at one height, page numbers and
    filing stamps."""
    seen: dict[tuple[str, int], set[int]] = defaultdict(set)
    lines = []
    for pno, page in enumerate(pdf):
        h = page.rect.height
        for block in page.get_text("dict")["blocks"]:
            for line in block.get("lines", ()):
                text = " ".join("".join(s["text"] for s in line["spans"]).split())
                y = line["bbox"][1] / h
                if text and (y < 0.12 or y > 0.88):
                    key = re.sub(r"\d+", "#", text.lower())
                    seen[key, round(y * 100)].add(pno)
                    lines.append((pno, text, key, round(y * 100), (line["bbox"][1], line["bbox"][3])))
    need = max(2, -(-pdf.page_count * 2 // 5))
    return [
        (pno, text, ys)
        for pno, text, key, y, ys in lines
        if len(seen[key, y]) >= need or _PAGE_NO.match(text) or _STAMP.match(text)
    ]


def _broken(texts: list[str]) -> tuple[int, list[tuple[str, str]]]:
    """Adjacent blocks, and those where the second carries on the first: an open sentence going on in lower
    case, or a block opening with a mark no Chinese paragraph starts with (：“…, ，…, 。…)."""
    pairs = list(zip(texts, texts[1:], strict=False))
    return len(pairs), [
        (a, b)
        for a, b in pairs
        if (not _CLOSED.search(a.rstrip()) and b[:1].islower()) or _CJK_GOES_ON.match(b)
    ]


def real(paths: list[Path]) -> tuple[dict[str, list[int]], int, list[str]]:
    """Per corpus [pairs, broken, raw pairs, raw broken]; furniture lines left; examples."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    left = 0
    examples = []
    for path in paths:
        doc = parse_file(path, NO_OCR)
        c = counts[path.parent.relative_to(path.parents[2]).as_posix()]
        n, broken = _broken([b.text for b in doc.blocks if b.type != "APPENDIX"])
        c[0] += n
        c[1] += len(broken)
        examples += [f"{path.name}: …{a[-40:]!r} | {b[:40]!r}…" for a, b in broken[:3]]
        with pymupdf.open(path) as pdf:
            n, broken = _broken([" ".join(b[4].split()) for page in pdf for b in page.get_text("blocks")])
            c[2] += n
            c[3] += len(broken)
            for pno, text, (top, bottom) in furniture_candidates(pdf):
                # the blocks whose box on that page reaches the line's height: a footnote opened by
                # its mark "2" is not the page number "2" below it
                on_page = [
                    b.text
                    for b in doc.blocks
                    if any(p == pno and y0 < bottom and y1 > top for p, (_, y0, _, y1) in b.spans)
                ]
                if any(t == text or t.startswith(text + " ") or t.endswith(" " + text) for t in on_page):
                    left += 1
                    examples.append(f"{path.name} p{pno + 1}: furniture left {text!r}")
    return counts, left, examples


def speed(paths: list[Path]) -> tuple[float, float]:
    start = time.perf_counter()
    pages = 0
    for path in paths:
        with pymupdf.open(path) as pdf:
            for page in pdf:
                page.get_text()
                pages += 1
    raw = pages / (time.perf_counter() - start)
    start = time.perf_counter()
    for path in paths:
        parse_file(path, NO_OCR)
    return pages / (time.perf_counter() - start), raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
    ap.add_argument("--docs", type=int, default=4, help="rendered documents per language")
    ap.add_argument("--paragraphs", type=int, default=40, help="paragraphs per rendered document")
    ap.add_argument("--show", type=int, default=10, help="examples of broken joins and furniture printed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for layout in ("zh", "en", "en clauses"):
            for name, (whole, merged) in rendered(Path(tmp), layout, args.docs, args.paragraphs).items():
                print(
                    f"rendered {layout:10s} {name:15s} whole {whole:6.1%}  blocks merging two {merged:6.1%}"
                )
    paths = real_pdfs(args.data.resolve())
    counts, left, examples = real(paths)
    total = [sum(c[i] for c in counts.values()) for i in range(4)]
    for name, (n, broken, raw_n, raw_broken) in [*sorted(counts.items()), ("all real PDFs", total)]:
        print(
            f"{name:30s} broken joins {broken:4d}/{n:5d} = {broken / max(n, 1):5.1%}"
            f"  (pymupdf blocks {raw_broken}/{raw_n} = {raw_broken / max(raw_n, 1):5.1%})"
        )
    print(f"furniture lines left on {len(paths)} real PDFs: {left}")
    for line in examples[: args.show]:
        print("  ", line)
    ours, raw = speed(paths)
    print(f"speed: parser {ours:.1f} pages/s, raw get_text {raw:.1f} pages/s ({ours / raw:.1%} of raw)")


if __name__ == "__main__":
    main()
