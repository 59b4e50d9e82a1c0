"""OCR character accuracy on scans with known text: pages of the shared text PDFs rasterised at 200 dpi
into image-only PDFs (the original's text layer is the ground truth), read back by the parser's OCR path.

    .venv/bin/python benchmarks/ocr_accuracy.py [--data ../shared/data] [--pages 40] [--scan-dpi 200]
        [--configs baseline default tesseract rapidocr tesseract:eng tesseract@200 tesseract,ocr_tesseract_psm=6]
        [--interleave] [--langs en]

A config is `default` (the shipped parse config, which picks the engine by the page's language: a
one-page scan of English is read by the zh engine first, then again by the en engine), `baseline` (the
shipped config as it was before Tesseract ran as its own binary: Tesseract inside PyMuPDF, RapidOCR's
line-angle classifier on), or an engine for both languages, optionally `:languages` (Tesseract's,
default parse.ocr_language), `@dpi` (the OCR render dpi, default parse.ocr_dpi) and `,key=value`
overrides of parse options (`tesseract,ocr_tesseract_psm=6`). Pages: up to --pages per language with at
least 200 characters whose text layer is visible (not an earlier OCR over a scan), taken round-robin over the documents (page 1 of each, then page 2, ...), in path order
(for en: the 24 contracts first) or, with --interleave, in turn. Both
sides are the page's lines in the parser's reading order, whitespace-normalised (no spaces beside CJK
characters). Printed per language and config: character accuracy (1 - CER, edits over all pages /
reference characters) over all of the pages' text and over their body: what the parser keeps of a page,
its furniture pass (`pipeline.parsing.cleanup.furniture`, rules left out) reading the page and the two
after it (`scanned_pdfs.window`), on both sides: the text layer of those pages for the truth, the OCR of
their scans for the reading (so running heads and Bates lines repeat, page numbers, clerks' stamps and
rules count on neither side, as in a parsed document). Then the worst page (all text), and pages per
second of OCR alone, every scanned page of the windows counted (one untimed page first loads the
models).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from pipeline.config import ParseConfig, apply_overrides
from pipeline.parsing.pdf import extract_lines
from pipeline.paths import SHARED_DATA

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the scan maker
from scanned_pdfs import body, body_truth, edit_distance, ocr_text, page_text, scanned, truth, window  # noqa: E402

LANG_DIRS = {
    "zh": ["zh/pdf"],
    "en": ["en/judgments/us_opinions_pdf", "en/contracts/pdf", "en/patents/pdf"],
}
_MIN_CHARS = 200


def earlier_ocr(page: pymupdf.Page) -> bool:
    """Whether most of the page's text is invisible (render mode 3): an earlier OCR laid over a scan, as
    on every shared patent, whose text is no ground truth (a 1960 patent's layer reads "comwmcmxons")."""
    spans = page.get_texttrace()
    hidden = sum(len(s["chars"]) for s in spans if s["type"] == 3)
    return hidden > sum(len(s["chars"]) for s in spans) / 2


@dataclass
class Sample:
    path: str
    pno: int
    truth: str  # all of the page's text
    window: list[int]  # the pages the body's furniture pass reads, `pno` among them
    body: str  # what the parser keeps of the page's text, its furniture pass reading the window

    @property
    def k(self) -> int:
        return self.window.index(self.pno)


def sample(data: Path, lang: str, n_pages: int, interleave: bool = False) -> list[Sample]:
    """Up to `n_pages` text-layer pages of `lang` with their ground truth; with
    `interleave`, the documents of the language's folders taken in turn (a contract, an opinion, a
    patent, ...) rather than folder after folder."""
    by_dir = [sorted((data / d).glob("*.pdf")) for d in LANG_DIRS[lang]]
    if interleave:
        paths = [p for group in itertools.zip_longest(*by_dir) for p in group if p is not None]
    else:
        paths = sorted(p for group in by_dir for p in group)
    docs = [pymupdf.open(p) for p in paths]
    out: list[Sample] = []
    pno = 0
    while len(out) < n_pages and any(pno < d.page_count for d in docs):
        for path, doc in zip(paths, docs, strict=True):
            if pno < doc.page_count and len(out) < n_pages:
                page = doc.load_page(pno)
                text = truth(page)
                if len(text) >= _MIN_CHARS and not earlier_ocr(page):
                    pnos = window(doc, pno)
                    out.append(Sample(str(path), pno, text, pnos, body_truth(doc, pnos, pnos.index(pno))))
        pno += 1
    for doc in docs:
        doc.close()
    return out


# What `baseline` changes back in the shipped config: the OCR options before the Tesseract binary path.
BASELINE = ["ocr_tesseract=pymupdf", "ocr_rapid_line_angle=true"]


def parse_config(spec: str) -> ParseConfig:
    """`default`, `baseline`, or `engine[:languages][@dpi][,key=value...]` as a parse config using that
    engine for both languages."""
    if spec in ("default", "baseline"):
        return ParseConfig(**apply_overrides({"ocr_max_pages": None}, BASELINE if spec == "baseline" else []))
    spec, *overrides = spec.split(",")
    spec, _, dpi = spec.partition("@")
    engine, _, languages = spec.partition(":")
    data = {"ocr_engine_zh": engine, "ocr_engine_en": engine, "ocr_max_pages": None}
    if languages:
        data["ocr_language"] = languages
    if dpi:
        data["ocr_dpi"] = int(dpi)
    return ParseConfig(**apply_overrides(data, overrides))


def run(scans: list[tuple[Sample, pymupdf.Document]], config: ParseConfig) -> dict:
    ocr_text(scans[0][1], config)  # untimed: the first call loads the engine's models
    edits, chars = [0, 0], [0, 0]  # all text, body
    worst = (2.0, "")
    spent, n_pages = 0.0, 0
    for s, scan in scans:
        start = time.perf_counter()
        pages, sizes, warnings = extract_lines(scan, config, "scan")
        spent += time.perf_counter() - start
        n_pages += len(pages)
        if warnings and not pages[s.k]:
            sys.exit(f"{s.path} page {s.pno + 1}: {warnings[0]}")
        width = sizes[s.k][0]
        for k, (ref, hyp) in enumerate([(s.truth, pages[s.k]), (s.body, body(pages, sizes, s.k))]):
            e = edit_distance(ref, page_text(hyp, width))
            edits[k], chars[k] = edits[k] + e, chars[k] + len(ref)
            if k == 0:
                worst = min(worst, (1 - e / len(ref), f"{Path(s.path).name} p{s.pno + 1}"))
    accuracy = [1 - e / max(c, 1) for e, c in zip(edits, chars, strict=True)]
    return {"accuracy": accuracy[0], "body": accuracy[1], "worst": worst, "rate": n_pages / spent}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument("--pages", type=int, default=40, help="pages per language")
    ap.add_argument("--scan-dpi", type=int, default=200)
    ap.add_argument(
        "--interleave", action="store_true", help="take the language's folders in turn, not one after another"
    )
    ap.add_argument("--langs", nargs="+", default=["zh", "en"], choices=sorted(LANG_DIRS))
    ap.add_argument("--configs", nargs="+", default=["baseline", "default", "tesseract", "rapidocr"])
    args = ap.parse_args()
    configs = {spec: parse_config(spec) for spec in args.configs}
    print(f"scans at {args.scan_dpi} dpi; accuracy = 1 - CER over whitespace-normalised text")
    print(
        f"{'lang':4} {'config':36} {'pages':>5} {'accuracy':>9} {'body':>7} {'worst page':>26} {'pages/s':>8}"
    )
    for lang in args.langs:
        scans = []
        for s in sample(args.data, lang, args.pages, args.interleave):
            scan = pymupdf.open()
            with pymupdf.open(s.path) as doc:
                for pno in s.window:
                    scanned(doc.load_page(pno), args.scan_dpi, into=scan)
            scans.append((s, scan))
        if not scans:
            sys.exit(f"{args.data}: no {lang} text-layer PDF pages under {LANG_DIRS[lang]}")
        for spec, config in configs.items():
            r = run(scans, config)
            acc, where = r["worst"]
            print(
                f"{lang:4} {spec:36} {len(scans):5d} {r['accuracy']:9.2%} {r['body']:7.2%} {where:>18} {acc:7.2%}"
                f" {r['rate']:8.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
