"""Cost of the predict stage of `ldx run` per 100 judgments: all tasks as the run has them (the shipped
heads and checkpoint, connective attention on), then each task alone, on complete criminal judgments
(the `fd` field of judge_criminal, as benchmarks/run_throughput.py feeds them). The baseline in the
same process is parsing + segmenting the same judgments.

    nice -n 10 .venv/bin/python benchmarks/predict_speed.py [--docs 100] [--profile]

Times are process CPU seconds (one torch thread), which a busy shared machine disturbs less than wall
time; wall seconds are printed beside them.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import json
import pstats
import tempfile
import time
from pathlib import Path

import torch

from flows.config import LdxConfig
from pipeline import segment
from pipeline.parsing import iter_documents
from pipeline.paths import SHARED_DATA
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.predict.config import PredictConfig
from retrieval.predict.stage import load_heads, predict_stage

TASKS = ("roles", "articles", "consistency", "provisos", "duplicates", "connective_attention")


def timed(fn) -> tuple[float, float, object]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--profile", action="store_true", help="cProfile the all-tasks call")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = LdxConfig()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judgments.jsonl"
        with (
            gzip.open(SHARED_DATA / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f,
            open(path, "w", encoding="utf-8") as out,
        ):
            for i, line in enumerate(f):
                if i >= args.docs + 2:
                    break
                rec = json.loads(line)
                out.write(json.dumps({"id": rec["text_id"], "text": rec["fd"]}, ensure_ascii=False) + "\n")
        base_cpu, base_wall, docs = timed(
            lambda: [(d, segment(d, cfg.segment)) for d in iter_documents(path, cfg.parse, errors=[])]
        )
    model = load_encoder(checkpoint_file(None), "cpu")
    heads = load_heads()
    warm, docs = docs[:2], docs[2:]
    n = len(docs)
    predict_stage([d for d, _ in warm], [s for _, ss in warm for s in ss], None, model)  # loads, caches

    def run(config: PredictConfig, out_dir: str | None = None):
        return predict_stage([d for d, _ in docs], [s for _, ss in docs for s in ss], config, model, out_dir)

    per100 = 100 / n
    print(
        f"{n} judgments, {sum(len(ss) for _, ss in docs)} segments; role head towers: "
        f"{heads.roles.towers if heads.roles else 'none'}"
    )
    print(f"baseline parse + segment: {base_cpu * per100:.2f} s CPU per 100 judgments")
    with tempfile.TemporaryDirectory() as out_dir:
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        cpu, wall, preds = timed(lambda: run(PredictConfig(), out_dir))
        if profiler:
            profiler.disable()
    print(
        f"predict, all tasks: {cpu * per100:.2f} s CPU ({wall * per100:.2f} s wall) per 100 judgments, "
        f"{len(preds)} rows; ratio to parse + segment {cpu / base_cpu:.2f}"
    )
    load_heads(None, False)
    cpu, wall, _ = timed(lambda: run(PredictConfig(role_encoder=False)))
    print(
        f"predict, all tasks, text-only role head (predict.role_encoder = false): {cpu * per100:.2f} s CPU "
        f"({wall * per100:.2f} s wall) per 100 judgments; ratio to parse + segment {cpu / base_cpu:.2f}"
    )
    for task in TASKS:
        only = PredictConfig(**{t: t == task for t in TASKS})
        cpu, wall, _ = timed(lambda c=only: run(c))
        print(f"  {task:22s} {cpu * per100:6.2f} s CPU ({wall * per100:.2f} s wall) per 100 judgments")
    text_roles = PredictConfig(**{t: t == "roles" for t in TASKS}, role_encoder=False)
    cpu, wall, _ = timed(lambda: run(text_roles))
    print(
        f"  {'roles, text-only head':22s} {cpu * per100:6.2f} s CPU ({wall * per100:.2f} s wall) per 100 judgments "
        "(predict.role_encoder = false)"
    )
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
