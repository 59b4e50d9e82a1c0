"""Tesseract run as its own binary on the rendered page, for the options PyMuPDF's OCR call cannot pass
(page segmentation mode above all). Its TSV output's words become `Line`s in page points, cut where a
wide gap parts two columns that Tesseract read as one line."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

import numpy as np
import pymupdf

from pipeline.config import ParseConfig
from pipeline.parsing.blanks import DARK, Blank, line_blanks
from pipeline.parsing.layout import CJK_CHAR, Line, clean_line

_WORD_LEVEL = "5"  # TSV rows: 1 page, 2 block, 3 paragraph, 4 line, 5 word
# Tesseract's OpenMP threads: one. With its default (every core) a Letter page at 300 dpi took 9.7 s on
# the idle 2-core machine and 1.6 s with one thread, the same TSV; a run's other pages and stages use the
# other core.
_OMP_THREADS = {"OMP_THREAD_LIMIT": "1"}


class OcrError(RuntimeError):
    """The Tesseract binary could not read a page; the message names the file and why (the caller's
    warning names the page)."""


@dataclass(slots=True)
class _Word:
    text: str
    conf: float
    x0: float
    y0: float
    x1: float
    y1: float


def command(config: ParseConfig, dpi: int) -> list[str]:
    """The `tesseract` command line that reads a PNG on stdin and writes TSV on stdout."""
    cmd = [config.ocr_tesseract_binary, "stdin", "stdout", "-l", config.ocr_language]
    cmd += ["--psm", str(config.ocr_tesseract_psm), "--dpi", str(dpi)]
    for key, value in sorted(config.ocr_tesseract_vars.items()):
        cmd += ["-c", f"{key}={value}"]
    return [*cmd, "tsv"]


def tesseract_lines(page: pymupdf.Page, config: ParseConfig, dpi: int, source: str) -> list[Line]:
    """The page rendered at `dpi` in greyscale and read by the `tesseract` binary: one Line per run of
    words on one of its text lines, with the fill-in blanks Tesseract drops put back (parse.ocr_blanks)."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    samples = np.frombuffer(pix.samples, dtype=np.uint8)
    if samples.min() == samples.max():
        return []  # a blank page: nothing to read, and no process to start
    tsv = _run(pix.tobytes("png"), config, dpi, f"{source}: tesseract")
    dark = samples.reshape(pix.height, pix.width) < DARK if config.ocr_blanks else None
    scale = 72.0 / dpi
    origin = page.rect
    out: list[Line] = []
    taken: list[Blank] = []  # a stroke goes to the first line that finds it (two may share a band)
    for words in _lines(tsv):
        if _vertical(words):
            continue
        # Like RapidOCR's score cut: a line with no word Tesseract is sure of is a picture or rule read
        # as letters ("Hvrrr /-" from a logo), not text it could read.
        if max(w.conf for w in words) < config.ocr_tesseract_min_conf:
            continue
        if dark is not None:
            blanks = [b for b in line_blanks(dark, words) if not any(b.overlaps(t) for t in taken)]
            taken += blanks
            words = _with_blanks(words, blanks)
        for run in _runs(words):
            text = clean_line(_joined(run))
            if not text:
                continue
            x0, y0 = min(w.x0 for w in run), min(w.y0 for w in run)
            x1, y1 = max(w.x1 for w in run), max(w.y1 for w in run)
            # The words' box stands in for the font size: median 7.4 pt for 8.2 pt English type, 20.9
            # pt for 16.5 pt Chinese (scans of the shared PDFs at 300 dpi).
            size = (y1 - y0) * scale
            box = (
                x0 * scale + origin.x0,
                y0 * scale + origin.y0,
                x1 * scale + origin.x0,
                y1 * scale + origin.y0,
            )
            out.append(Line(text, *box, size, True, True))
    return out


def _run(png: bytes, config: ParseConfig, dpi: int, where: str) -> str:
    """Tesseract's TSV for a PNG image; OcrError where the binary cannot read it."""
    try:
        done = subprocess.run(
            command(config, dpi),
            input=png,
            capture_output=True,
            timeout=config.max_doc_seconds,
            check=False,
            env={**os.environ, **_OMP_THREADS},
        )
    except FileNotFoundError:
        raise OcrError(f"{where}: binary {config.ocr_tesseract_binary!r} not found") from None
    except OSError as e:  # not executable, a directory
        raise OcrError(f"{where}: cannot run {config.ocr_tesseract_binary!r} ({e.strerror or e})") from None
    except subprocess.TimeoutExpired:
        raise OcrError(f"{where}: over {config.max_doc_seconds:g} s (parse.max_doc_seconds)") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OcrError(f"{where}: exit status {done.returncode} ({said[-1] if said else 'no message'})")
    return done.stdout.decode("utf-8", "replace")


def _lines(tsv: str) -> list[list[_Word]]:
    """The words of each text line of Tesseract's TSV, in its order."""
    lines: dict[tuple[str, str, str, str], list[_Word]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != _WORD_LEVEL or not cols[11].strip():
            continue
        left, top, width, height = (float(v) for v in cols[6:10])
        word = _Word(cols[11].strip(), float(cols[10]), left, top, left + width, top + height)
        lines.setdefault((cols[1], cols[2], cols[3], cols[4]), []).append(word)
    return [sorted(words, key=lambda w: w.x0) for words in lines.values()]


def _vertical(words: list[_Word]) -> bool:
    """Whether Tesseract read a line top to bottom: its words stacked, no two sharing a row. A margin's
    column of pleading-paper line numbers comes back so, as one line of letters ("NO HN KF", with Han
    characters among them) whose tall box would take the body's rows into one in `merge_rows`; the
    text layer's vertical lines are left out of the reading order too."""
    stack = sorted(words, key=lambda w: w.y0)
    pairs = zip(stack, stack[1:], strict=False)
    # a quarter of a word's height: stacked boxes may touch, a row's words overlap almost wholly
    return len(stack) > 1 and all(a.y1 - b.y0 < 0.25 * min(a.y1 - a.y0, b.y1 - b.y0) for a, b in pairs)


def _with_blanks(words: list[_Word], blanks: list[Blank]) -> list[_Word]:
    """A line's words with its blanks among them in x order: a blank is one word with the words it
    touches ("20___", "_____,"), else a word of its own, with the stroke's box."""
    out = list(words)
    for b in blanks:
        i = next((k for k, w in enumerate(out) if w.x0 >= b.x1), len(out))
        lo, hi = i - int(b.glue_left), i + int(b.glue_right)
        touched = out[lo:hi]
        text = "".join(w.text for w in out[lo:i]) + "_" * b.count + "".join(w.text for w in out[i:hi])
        tall = touched or [b]
        out[lo:hi] = [
            _Word(
                text,
                max((w.conf for w in touched), default=100.0),
                min([b.x0, *(w.x0 for w in touched)]),
                min(w.y0 for w in tall),
                max([b.x1, *(w.x1 for w in touched)]),
                max(w.y1 for w in tall),
            )
        ]
    return out


def _runs(words: list[_Word]) -> list[list[_Word]]:
    """A line's words cut where the gap between two is wider than 1.5 line heights: the gutter between
    columns, which a page segmentation mode without layout analysis reads across."""
    height = max(max(w.y1 - w.y0 for w in words), 1.0)  # a word's box is as tall as its letters
    runs = [[words[0]]]
    for w in words[1:]:
        if w.x0 - runs[-1][-1].x1 > 1.5 * height:
            runs.append([w])
        else:
            runs[-1].append(w)
    return runs


def _joined(words: list[_Word]) -> str:
    """Words joined by spaces, but none beside a CJK character: Tesseract's chi_sim makes each Han
    character and mark a word of its own, and the spacing carries no meaning there."""
    text = words[0].text
    for w in words[1:]:
        text += w.text if CJK_CHAR.match(text[-1]) or CJK_CHAR.match(w.text[0]) else " " + w.text
    return text
