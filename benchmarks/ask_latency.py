"""Latency of a warm `ldx ask`: one `retrieval.Asker` loaded once, then a fixed list of 20 questions.

    nice -n 19 .venv/bin/python benchmarks/ask_latency.py [--out OUT_DIR] [--threads 2]

Without --out it runs `ldx run data/samples` into a temporary folder first (the four demo documents).
Prints the cold start (loading the run, BM25, the encoder, the store and the reader), the first pass over the
questions (document states read and cached as they are first cited; the sentence model's vectors of the
run's English segments read from the index, embedded only where an index written before them lacks them)
and a second, warm pass: p50/p95 seconds per question. Goal: warm p95 <= 1 s on 2 cores for a 300-document run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from flows.run import run_flow
from retrieval.ask import Asker

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"

QUESTIONS = [
    "被告人犯什么罪，判处什么刑罚？",
    "What did the court decide on appeal?",
    "辩护人是谁？",
    "被告人周明远盗窃的财物共计价值多少元？",
    "扣押在案的作案工具如何处理？",
    "本院为什么对被告人从轻处罚？",
    "被告应返还原告多少装修款？",
    "法院酌定被告支付违约金多少元？",
    "案件受理费是多少？",
    "原告与被告签订的是什么合同？",
    "Why was the appeal allowed?",
    "How long was the vessel detained?",
    "Who is the appellant?",
    "What does clause 4.5 of the policy exclude?",
    "How much indemnity did the appellant claim?",
    "What wavelength does the light-emitting diode emit?",
    "Who is the assignee of the patent?",
    "What fraction of the excitation light reaches the reference cell?",
    "When does the controller report that the window requires cleaning?",
    "What is the melting point of tungsten?",
]


def _percentiles(times: list[float]) -> dict:
    return {
        "p50_s": round(float(np.percentile(times, 50)), 3),
        "p95_s": round(float(np.percentile(times, 95)), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--out", type=Path, help="An OUT_DIR written by `ldx run`; default: a fresh run of data/samples."
    )
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out
        if out is None:
            out = Path(tmp) / "out"
            run_flow(str(SAMPLES), str(out), {})
        t0 = time.perf_counter()
        asker = Asker(out)
        cold = time.perf_counter() - t0
        passes = []
        for _ in range(2):
            times = []
            for q in QUESTIONS:
                t = time.perf_counter()
                asker.ask(q)
                times.append(time.perf_counter() - t)
            passes.append(times)
    print(
        json.dumps(
            {
                "out_dir": str(args.out or "data/samples run"),
                "questions": len(QUESTIONS),
                "threads": args.threads,
                "cold_start_s": round(cold, 2),
                "first_pass": {**_percentiles(passes[0]), "first_question_s": round(passes[0][0], 3)},
                "warm": _percentiles(passes[1]),
                "cache": {"hits": asker.cache.hits, "misses": asker.cache.misses},
            }
        )
    )


if __name__ == "__main__":
    main()
