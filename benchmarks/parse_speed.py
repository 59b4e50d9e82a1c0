"""Pages per second of the full PDF parser against raw PyMuPDF text extraction and pymupdf4llm.

    .venv/bin/python benchmarks/parse_speed.py [--data ../shared/data] [--llm-pages 24] [--rounds 3]

All three read the text-layer PDFs of the shared corpora (OCR off everywhere, so only text layers are timed);
pymupdf4llm is slow enough that it runs on an even sample of pages, and its rate is per page read.
Printed: each rate, then the parser's rate as a ratio to the other two (measured in this process).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
from pathlib import Path

import pymupdf

from pipeline.config import ParseConfig
from pipeline.parsing import parse_file
from pipeline.paths import SHARED_DATA

PDF_DIRS = ["zh/pdf", "en/judgments/us_opinions_pdf", "en/patents/pdf", "en/contracts/pdf"]


def text_layer_pdfs(data: Path) -> list[Path]:
    out = []
    for d in PDF_DIRS:
        for path in sorted((data / d).iterdir()):
            if path.suffix.lower() != ".pdf":
                continue
            with pymupdf.open(path) as doc:
                if any(page.get_text().strip() for page in doc):
                    out.append(path)
    return out


def raw_rate(paths: list[Path]) -> tuple[int, float]:
    pages, start = 0, time.perf_counter()
    for path in paths:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages, time.perf_counter() - start


def parser_rate(paths: list[Path]) -> tuple[int, float]:
    config = ParseConfig(ocr=False)
    pages, start = 0, time.perf_counter()
    for path in paths:
        pages += parse_file(path, config).n_pages
    return pages, time.perf_counter() - start


def llm_rate(paths: list[Path], n_pages: int) -> tuple[int, float]:
    import pymupdf4llm

    per_doc = max(1, n_pages // len(paths))
    pages, start = 0, time.perf_counter()
    for path in paths:
        with pymupdf.open(path) as doc:
            chosen = list(range(min(per_doc, doc.page_count)))
            with contextlib.redirect_stdout(io.StringIO()):  # it prints a banner per document
                pymupdf4llm.to_markdown(doc, pages=chosen, show_progress=False, use_ocr=False)
            pages += len(chosen)
    return pages, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument(
        "--llm-pages", type=int, default=24, help="pages pymupdf4llm converts (sampled over the files)"
    )
    ap.add_argument("--rounds", type=int, default=3, help="best of this many rounds for the two fast readers")
    args = ap.parse_args()

    paths = text_layer_pdfs(args.data.resolve())
    parser_rate(paths[:2])  # warm imports and regex compilation
    raw = min((raw_rate(paths) for _ in range(args.rounds)), key=lambda r: r[1])
    full = min((parser_rate(paths) for _ in range(args.rounds)), key=lambda r: r[1])
    sample = paths[:: max(1, len(paths) // args.llm_pages)]
    llm = llm_rate(sample, args.llm_pages)
    rate = {name: pages / secs for name, (pages, secs) in {"raw": raw, "parser": full, "llm": llm}.items()}
    print(f"text-layer PDFs: {len(paths)} files, {raw[0]} pages")
    print(f"raw page.get_text():      {rate['raw']:8.1f} pages/s")
    print(f"full parser (ldx parse):  {rate['parser']:8.1f} pages/s")
    print(f"pymupdf4llm.to_markdown:  {rate['llm']:8.1f} pages/s ({llm[0]} pages)")
    print(f"parser / raw PyMuPDF:     {rate['parser'] / rate['raw']:8.2f}  (goal >= 0.30)")
    print(f"parser / pymupdf4llm:     {rate['parser'] / rate['llm']:8.1f}x (goal >= 100x)")


if __name__ == "__main__":
    main()
