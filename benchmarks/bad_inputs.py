"""`ldx run` over real files mixed with every kind of hostile input: peak RSS, wall time, the documents
that came through and one `errors` row per bad file with its reason.

The bad inputs: an `.xml.gz` and a `.jsonl.gz` gzip bomb (about 1 MB inflating to 2.1 GB at full size),
a blank 60×60-inch and a 200×200-inch page, 1,999 blank pages (OCR on each), NUL bytes in a `.txt`, an
OLE header followed by junk as `.doc`, a truncated `.jsonl.gz`, cp1252 text, an empty and a blank file. The good
ones are real shared files (PDFs, a LegalDocML `.xml.gz`, a court `.doc`, three judgments as JSONL).

    .venv/bin/python benchmarks/bad_inputs.py [--tiny] [--keep DIR] [--set run.stages=[] ...]

`--tiny` shrinks the bombs and the page count (a check that the script works, not a measurement).
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parents[1]
SHARED = (ROOT / ".." / "shared" / "data").resolve()
GOOD = (
    "zh/pdf",  # the first PDF of each directory
    "en/judgments/us_opinions_pdf",
    "en/judgments/uk_ewca_2020_xml/2020-ewca-77-civ.xml.gz",
    "zh/doc",
)
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _gzip_bomb(path: Path, head: bytes, fill: bytes, size: int) -> None:
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(head)
        chunk = fill * (2**20 // len(fill))
        for _ in range(size // len(chunk)):
            f.write(chunk)


def _blank_pdf(path: Path, inches: float, pages: int = 1) -> None:
    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page(width=72 * inches, height=72 * inches)
    doc.save(path)


def _judgments(n: int) -> bytes:
    with gzip.open(SHARED / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        return "".join(
            json.dumps({"text": json.loads(next(f))["fd"]}, ensure_ascii=False) + "\n" for _ in range(n)
        ).encode()


def build_good(root: Path) -> list[str]:
    names = []
    for rel in GOOD:
        src = SHARED / rel
        src = sorted(p for p in src.iterdir() if p.suffix in (".pdf", ".doc"))[0] if src.is_dir() else src
        shutil.copy(src, root / src.name)
        names.append(src.name)
    (root / "judgments.jsonl").write_bytes(_judgments(3))
    return [*names, "judgments.jsonl"]


def build_bad(root: Path, tiny: bool) -> None:
    """The hostile inputs."""
    inflated = 64 * 2**20 if tiny else int(2.1 * 2**30)
    _gzip_bomb(root / "bomb.xml.gz", b'<?xml version="1.0"?><akomaNtoso>', b" ", inflated)
    _gzip_bomb(root / "bomb.jsonl.gz", b'{"text": "', b"a", inflated)
    _blank_pdf(root / "page_60in.pdf", 60)
    _blank_pdf(root / "page_200in.pdf", 200)
    _blank_pdf(root / "blank_pages.pdf", 8.5, 120 if tiny else 1999)
    text = (SHARED / "en/patents/pdf/us-223898-edison-lightbulb.source_text.txt").read_text(encoding="utf-8")
    (root / "nul.txt").write_bytes(text[:2000].encode() + b"\x00" * 64 + text[2000:4000].encode())
    (root / "junk.doc").write_bytes(OLE + bytes(range(256)) * 64)
    cut = gzip.compress(_judgments(3))
    (root / "truncated.jsonl.gz").write_bytes(cut[: len(cut) // 2])
    quoted = "\u201c" + text[:3000].replace("'", "\u2019") + "\u201d \u2014 \u00e9t\u00e9"
    (root / "cp1252.txt").write_bytes(quoted.encode("cp1252", errors="replace"))
    (root / "blank.txt").write_bytes(b"  \n\t\n")  # whitespace only (an empty .txt would be empty.pdf again)
    (root / "empty.pdf").write_bytes(b"")


def run(input_dir: Path, out: Path, settings: list[str]) -> tuple[int, float, int, str]:
    """(exit code, wall seconds, peak RSS in bytes of the largest process, stderr tail) of one `ldx run`."""
    ldx = Path(sys.executable).with_name("ldx")
    cmd = [str(ldx), "run", str(input_dir), "--out", str(out), *(a for s in settings for a in ("--set", s))]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return done.returncode, seconds, peak, done.stderr[-2000:]


def report(out: Path, good: list[str], bad: list[str]) -> None:
    from pipeline.store import open_duckdb

    con = open_duckdb(out)
    docs = con.execute("SELECT source FROM documents").fetchall()
    errors = con.execute("SELECT source, error_type, reason FROM errors ORDER BY source").fetchall()
    print(f"documents: {len(docs)}")
    for name in good:
        print(f"  {name}: {sum(1 for (s,) in docs if Path(s.split('#')[0].split(':')[0]).name == name)}")
    # cp1252 text is not bad input but a trap for the decoder: it must come through as a document, its
    # curly quotes and accents read as cp1252 (not as GB18030 Han characters)
    text = con.execute(
        "SELECT string_agg(b.text, ' ') FROM blocks b JOIN documents d USING (doc_id) WHERE d.source LIKE ?",
        ["%cp1252.txt"],
    ).fetchone()[0]
    right = bool(text) and "\u201c" in text and "\u00e9t\u00e9" in text
    print(f"  cp1252.txt: {'read as cp1252' if right else 'NOT READ RIGHT'}")
    print("errors (one row per bad file):")
    for name in (n for n in bad if n != "cp1252.txt"):
        rows = [r for r in errors if Path(r[0]).name.split(":")[0].split("#")[0] == name]
        first = f"{rows[0][1]}: {rows[0][2]}" if rows else "NO ERROR ROW"
        more = f" (+{len(rows) - 1} more)" if len(rows) > 1 else ""
        print(f"  {name}: {first}{more}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="small bombs and page counts: check the script works")
    ap.add_argument("--keep", type=Path, help="build and run in this directory and keep it")
    ap.add_argument("--set", dest="settings", action="append", default=[], help="config override for ldx run")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="ldx-bad-"))
    input_dir = work / "in"
    input_dir.mkdir(parents=True, exist_ok=True)
    good = build_good(input_dir)
    build_bad(input_dir, args.tiny)
    bad = sorted({p.name for p in input_dir.iterdir()} - set(good))
    code, seconds, peak, err = run(input_dir, work / "out", args.settings)
    print(f"ldx run: exit {code}, {seconds:.1f} s, peak RSS {peak / 2**20:.0f} MiB")
    if code != 0:
        print(err)
    report(work / "out", good, bad)
    if args.keep is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
