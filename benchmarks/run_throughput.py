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
import itertools
import statistics
import tempfile
import time
from pathlib import Path

from run_common import copy_pdfs, flow_seconds, ldx_run, write_jsonl, zh_judgments


def build_input(root: Path, n_docs: int, with_pdfs: bool) -> None:
    root.mkdir(parents=True)
    write_jsonl(root / "judge_criminal.jsonl", list(itertools.islice(zh_judgments(), n_docs)))
    if with_pdfs:
        copy_pdfs(root)


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
        runs = [ldx_run(input_dir, Path(tmp) / f"out{i}", args.overrides)[:2] for i in range(args.repeats)]

    walls = [w for w, _ in runs]
    flow_s = [flow_seconds(m) for _, m in runs]
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


if __name__ == "__main__":
    main()
