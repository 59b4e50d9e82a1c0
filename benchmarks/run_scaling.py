"""How the cost of `ldx run` grows with the size of its corpus.

Documents/min, pages/s, peak RSS, OUT_DIR bytes per document and seconds per stage at N documents, for
each N asked for, as a table and a log-log plot.

The corpus is the shared Chinese criminal judgments (390, median ~5k characters) and English Court of
Appeal judgments (315, median 53k characters), alternating (`--languages` to take one), as JSONL files
of `--per-file` records (so a run has many batches, as a real corpus would). Past the originals each
record is used again as a copy: a line `〔copy k〕` in front of its text makes its bytes, hence its
doc_id (the sha256 of the JSONL line, pipeline/parsing/text.py), new, and the dedup stage sees a new
document (a near-duplicate of its original, as a re-filed judgment is). The mark goes in front, not
behind, so that the encoder's shared-prefix reuse (retrieval/prefix.py) cannot serve a copy from its
original's states: each copy costs what a new document costs. `--pdfs` adds the 22 judgment PDFs once
(pages/s is over them; with JSONL alone it reads 0); `--sizes 0 --pdfs` runs the PDFs alone, and
`--pdf-copies K` adds K copies of each, marked on their first page with text (run_common.marked_pdf).

Each N runs `ldx run` as a fresh process on a fresh OUT_DIR (no cache). Peak RSS is of the ldx process
tree (wait4 of the run: the largest of the process and its waited-for children, the encoder among them).
Stage times are the manifest's `seconds` (summed over batches; stages overlap, so they add up to more
than the wall time).

    python benchmarks/run_scaling.py [--sizes 100 1000 5000] [--languages zh en] [--pdfs [--pdf-copies K]]
        [--plot benchmarks/run_scaling.png] [--set run.workers=2 ...] [--dask]

Flat rows for documents/min and bytes/document, and a flat peak RSS, are what linear cost looks like.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path

from run_common import copy_pdfs, dir_bytes, en_judgments, flow_seconds, ldx_run, write_jsonl, zh_judgments

try:  # the plot is optional: without matplotlib the table is still printed
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None


SOURCES = {"zh": zh_judgments, "en": en_judgments}


def corpus(n: int, languages: list[str]) -> list[str]:
    """n judgment texts of the languages, alternating, then copies marked in front (module docstring)."""
    texts = [list(SOURCES[lang]()) for lang in languages]
    base = [t for group in itertools.zip_longest(*texts) for t in group if t is not None]
    out = []
    for i in range(n):
        copy, k = divmod(i, len(base))
        out.append(base[k] if copy == 0 else f"〔copy {copy}〕\n{base[k]}")
    return out


def build_input(root: Path, n: int, args) -> None:
    root.mkdir(parents=True)
    texts = corpus(n, args.languages)
    per_file = args.per_file
    for k in range(0, n, per_file):
        write_jsonl(root / f"judgments-{k // per_file:05d}.jsonl", texts[k : k + per_file])
    if args.pdfs:
        copy_pdfs(root, args.pdf_copies)


def measure(tmp: Path, n: int, args, tag: str = "") -> dict:
    """One run at n documents: its figures as one row of the table."""
    input_dir, out = tmp / f"in-{n}{tag}", tmp / f"out-{n}{tag}"
    build_input(input_dir, n, args)
    wall, manifest, rss = ldx_run(input_dir, out, args.overrides, ["--dask"] if args.dask else [])
    counts = manifest["counts"]
    docs = max(counts["documents"], 1)
    row = {
        "N": n,
        "documents": counts["documents"],
        "pages": counts["pages"],
        "errors": counts["errors"],
        "wall_s": wall,
        "flow_s": flow_seconds(manifest),
        "docs_per_min": counts["documents"] / wall * 60,
        "pages_per_s": counts["pages"] / wall,
        "peak_rss_mb": rss / 2**20,
        "out_kb_per_doc": dir_bytes(out) / docs / 1024,
        "stages": manifest["seconds"],
    }
    if not tag:
        print(_line(row), flush=True)  # each size as it finishes: the large ones take a while
    return row


COLUMNS = (
    ("N", "{:>6}"),
    ("documents", "{:>6}"),
    ("pages", "{:>5}"),
    ("wall_s", "{:>8.1f}"),
    ("docs_per_min", "{:>8.0f}"),
    ("pages_per_s", "{:>7.1f}"),
    ("peak_rss_mb", "{:>7.0f}"),
    ("out_kb_per_doc", "{:>8.1f}"),
)
HEADER = "     N   docs pages   wall s docs/min pages/s RSS MiB KB/doc | seconds per stage (per document, ms)"


def _line(row: dict) -> str:
    cells = " ".join(fmt.format(row[k]) for k, fmt in COLUMNS)
    docs = max(row["documents"], 1)
    stages = ", ".join(f"{k} {v:.1f} ({1000 * v / docs:.0f})" for k, v in row["stages"].items())
    return f"{cells} | {stages}"


def plot(rows: list[dict], path: Path) -> None:
    """Log-log: wall time, peak RSS, OUT_DIR bytes and each stage's time against N, with a slope-1 guide."""
    ns = [r["N"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.plot(ns, [r["wall_s"] for r in rows], "o-", label="wall s")
    ax.plot(ns, [r["peak_rss_mb"] for r in rows], "s-", label="peak RSS MiB")
    ax.plot(ns, [r["out_kb_per_doc"] * r["documents"] / 1024 for r in rows], "^-", label="OUT_DIR MiB")
    for stage in rows[-1]["stages"]:
        ax.plot(ns, [r["stages"].get(stage, float("nan")) for r in rows], ".--", label=f"{stage} s")
    base = next((r for r in rows if r["N"]), None)  # N = 0 (--pdfs alone) gives no slope to draw from
    if base is not None:
        line = [base["wall_s"] * n / base["N"] for n in ns]
        ax.plot(ns, line, ":", color="black", label="linear (from the first wall)")
    ax.set(xscale="log", yscale="log", xlabel="documents (N)", title="ldx run: cost against corpus size")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000], help="values of N")
    ap.add_argument("--per-file", type=int, default=50, help="JSONL records per input file")
    ap.add_argument(
        "--languages", nargs="+", choices=sorted(SOURCES), default=["zh", "en"], help="judgments of these"
    )
    ap.add_argument("--pdfs", action="store_true", help="add the 22 judgment PDFs (once, at every N)")
    ap.add_argument(
        "--pdf-copies",
        type=int,
        default=0,
        help="with --pdfs, add this many marked copies of each PDF (run_common.marked_pdf): a PDF corpus "
        "large enough that start-up and the last batch's drain do not set pages/s",
    )
    ap.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one unreported run at the smallest N first (default): the first run of a session pays for a "
        "cold page cache and start-up (on the busy 2-core machine: 20 zh judgments 183 s first, 23 s later)",
    )
    ap.add_argument("--dask", action="store_true", help="ldx run --dask (a local Dask cluster)")
    ap.add_argument("--plot", type=Path, default=Path("benchmarks/run_scaling.png"), help="log-log plot")
    ap.add_argument(
        "--set", dest="overrides", action="append", default=[], help="config override for ldx run"
    )
    args = ap.parse_args()

    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="ldx-scaling-") as tmp:
        if args.warmup:
            measure(Path(tmp), min(args.sizes), args, tag="-warmup")
        rows = [measure(Path(tmp), n, args) for n in sorted(args.sizes)]
    first, last = rows[0], rows[-1]
    if len(rows) > 1:
        growth = (last["wall_s"] / first["wall_s"]) / (last["N"] / first["N"])
        print(
            f"wall time grew {growth:.2f}x what linear growth from N={first['N']} to N={last['N']} predicts"
        )
    if plt is None:
        print("matplotlib is not installed: no plot")
    else:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
