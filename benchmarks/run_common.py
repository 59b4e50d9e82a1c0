"""What the `ldx run` benchmarks share: building an input directory from the shared judgments and running
`ldx run` as a fresh process on it (benchmarks/run_throughput.py, benchmarks/run_scaling.py).

Imported by those scripts from their own directory (`python benchmarks/<script>.py` puts benchmarks/ first
on sys.path).
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pymupdf

from pipeline.paths import SHARED_DATA

PDF_DIRS = ("zh/pdf", "en/judgments/us_opinions_pdf")
ZH_JUDGMENTS = "zh/judgments/judge_criminal.jsonl.gz"
EN_JUDGMENTS = "en/judgments/uk_ewca_2020.jsonl.gz"


def zh_judgments() -> Iterator[str]:
    """The complete criminal judgments (the `fd` field) of judge_criminal, in file order."""
    with gzip.open(SHARED_DATA / ZH_JUDGMENTS, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)["fd"]


def en_judgments() -> Iterator[str]:
    """The Court of Appeal judgments as plain text: their header lines, then the numbered paragraphs."""
    with gzip.open(SHARED_DATA / EN_JUDGMENTS, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            paras = [f"{p['num']} {p['text']}" if p.get("num") else p["text"] for p in rec["paragraphs"]]
            yield "\n".join([*rec["header_lines"], "", *paras])


def write_jsonl(path: Path, texts: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for text in texts:
            out.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")


def copy_pdfs(root: Path, copies: int = 0) -> None:
    """The 22 judgment PDFs into `root`, and `copies` marked copies of each (`marked_pdf`)."""
    for rel in PDF_DIRS:
        for pdf in sorted((SHARED_DATA / rel).glob("*.pdf")):
            shutil.copy(pdf, root / pdf.name)
            for k in range(1, copies + 1):
                marked_pdf(pdf, root / f"{pdf.stem}.copy{k}.pdf", k)


def marked_pdf(source: Path, target: Path, k: int) -> None:
    """`source` with a line "[copy k]" at the top of its first page that has a text layer (none for an
    image-only PDF, whose copy differs in its metadata alone): new bytes, hence a new doc_id, and a new
    first segment, so that the encoder's shared-prefix reuse cannot serve the copy from its original's
    states and the copy costs what a new document costs (as the marked JSONL copies of run_scaling.py)."""
    with pymupdf.open(source) as doc:
        page = next((p for p in doc if p.get_text().strip()), None)
        if page is not None:
            page.insert_text((page.rect.x0 + 36, page.rect.y0 + 20), f"[copy {k}]", fontsize=8)
        doc.set_metadata({**(doc.metadata or {}), "subject": f"copy {k}"})
        doc.save(target)


def ldx_run(
    input_dir: Path, out: Path, overrides: list[str], extra: list[str] = ()
) -> tuple[float, dict, int]:
    """Run `ldx run INPUT --out OUT` as a fresh process: (wall seconds, its manifest, peak RSS in bytes).

    The peak RSS is the kernel's maximum over the ldx process and every child it waited for (the index
    stage's encoder process among them): wait4's rusage, which is what getrusage(RUSAGE_CHILDREN) would
    report had this been the only child, taken per run so that one run's peak does not mask the next."""
    sets = [arg for o in overrides for arg in ("--set", o)]
    env = {**os.environ, "PREFECT_LOGGING_LEVEL": "WARNING"}
    cmd = [sys.executable, "-m", "flows", "run", str(input_dir), "--out", str(out), *sets, *extra]
    err = out.with_name(out.name + ".stderr")
    t0 = time.perf_counter()
    with open(err, "w") as stderr:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ldx run failed:\n{err.read_text()[-3000:]}")
    return wall, json.loads((out / "manifest.json").read_text()), usage.ru_maxrss * 1024


def flow_seconds(manifest: dict) -> float:
    """The flow's own time, from the manifest's start and end (whole seconds)."""
    return (
        dt.datetime.fromisoformat(manifest["ended_at"]) - dt.datetime.fromisoformat(manifest["started_at"])
    ).total_seconds()


def dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
