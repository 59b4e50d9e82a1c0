"""Throughput of `ldx run` end to end on the shared judgments: documents per minute, pages per second and
each stage's share of the time.

The input is N complete criminal judgments (the `fd` field of judge_criminal) as one JSONL file plus the
judgment PDFs (zh/pdf and en/judgments/us_opinions_pdf). Each repeat runs `ldx run` as a fresh process on
a fresh OUT_DIR (no cache), so the figure includes start-up and the temporary Prefect server. The
baseline, measured in the same process, is a plain loop of `pipeline.load_documents` + `pipeline.segment`
over the same files: the ratio is what the orchestration costs (or gains through parallel batches).

    .venv/bin/python benchmarks/run_throughput.py [--docs 300] [--repeats 3] [--set run.workers=2 ...]

The default stages include the model ones (index: every segment through the Transformer-XL); add
`--set 'run.stages=[]'` to measure parse → segment → write alone.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.paths import SHARED_DATA

PDF_DIRS = ("zh/pdf", "en/judgments/us_opinions_pdf")


def build_input(root: Path, n_docs: int, with_pdfs: bool) -> None:
    root.mkdir(parents=True)
    with (
        gzip.open(SHARED_DATA / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f,
        open(root / "judge_criminal.jsonl", "w", encoding="utf-8") as out,
    ):
        for i, line in enumerate(f):
            if i >= n_docs:
                break
            rec = json.loads(line)
            out.write(json.dumps({"id": rec["text_id"], "text": rec["fd"]}, ensure_ascii=False) + "\n")
    if with_pdfs:
        for rel in PDF_DIRS:
            for pdf in sorted((SHARED_DATA / rel).glob("*.pdf")):
                shutil.copy(pdf, root / pdf.name)


def baseline(input_dir: Path) -> tuple[float, int]:
    """Seconds and documents of a plain sequential parse + segment loop over the same files."""
    from flows.config import LdxConfig
    from pipeline import segment
    from pipeline.parsing import iter_documents

    cfg = LdxConfig()
    t0 = time.perf_counter()
    n = 0
    for path in sorted(input_dir.iterdir()):
        try:
            for doc in iter_documents(path, cfg.parse, errors=[]):
                segment(doc, cfg.segment)
                n += 1
        except Exception:  # noqa: BLE001 - a bad file counts as no document, as in the flow
            pass
    return time.perf_counter() - t0, n


def ldx_run(input_dir: Path, out: Path, overrides: list[str]) -> tuple[float, dict]:
    sets = [arg for o in overrides for arg in ("--set", o)]
    env = {**os.environ, "PREFECT_LOGGING_LEVEL": "WARNING"}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("ldx")), "run", str(input_dir), "--out", str(out), *sets],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"ldx run failed:\n{proc.stderr[-3000:]}")
    return wall, json.loads((out / "manifest.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=300, help="judgments from judge_criminal.jsonl.gz")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-pdfs", action="store_true", help="only the JSONL judgments")
    ap.add_argument(
        "--set", dest="overrides", action="append", default=[], help="config override for ldx run"
    )
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="ldx-bench-") as tmp:
        input_dir = Path(tmp) / "in"
        build_input(input_dir, args.docs, not args.no_pdfs)
        base_s, base_docs = baseline(input_dir)
        runs = [ldx_run(input_dir, Path(tmp) / f"out{i}", args.overrides) for i in range(args.repeats)]

    walls = [w for w, _ in runs]
    flow_s = [(_ts(m["ended_at"]) - _ts(m["started_at"])) for _, m in runs]
    counts = runs[0][1]["counts"]
    docs, pages = counts["documents"], counts["pages"]
    wall = statistics.median(walls)
    per_min = docs / wall * 60
    base_per_min = base_docs / base_s * 60
    print(
        f"input: {docs} documents ({args.docs} JSONL judgments + PDFs), {pages} PDF pages, {counts['errors']} errors"
    )
    print(
        f"ldx run end to end (median of {args.repeats}): {wall:.1f} s -> {per_min:.0f} documents/min, {pages / wall:.1f} pages/s"
    )
    print(
        f"  of which the flow itself: {statistics.median(flow_s):.1f} s; start-up and shutdown: {wall - statistics.median(flow_s):.1f} s"
    )
    print(
        f"baseline (plain parse+segment loop, same process): {base_s:.1f} s -> {base_per_min:.0f} documents/min"
    )
    print(f"ratio ldx run / baseline: {per_min / base_per_min:.2f}")
    seconds = runs[len(runs) // 2][1]["seconds"]
    total = sum(seconds.values()) or 1.0
    print("share per stage: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in seconds.items()))
    print(f"goal >= 200 judgments/min: {'met' if per_min >= 200 else 'NOT met'}")


def _ts(iso: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(iso).timestamp()


if __name__ == "__main__":
    main()
