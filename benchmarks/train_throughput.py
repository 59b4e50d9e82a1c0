"""Training-step tokens/s of candidate model configs, to choose the default (shipped) configuration.

Each candidate trains a few steps on real document-ordered batches (a prepared stream folder from
`ldx train prepare`) with the full recurrence (memory on). Prints tokens/s, the ratio to the first
candidate (measured in the same process), parameter count and fp16 size.

    .venv/bin/python benchmarks/train_throughput.py --data runs/lm_data --steps 6 --threads 2
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from txl.train import TrainConfig, Trainer

BASE = dict(n_head=4, d_head=64, dropout=0.0, pre_lnorm=True, cutoffs=[2000, 8000], div_val=1)
CANDIDATES: dict[str, dict] = {
    "d256-L4-T128": dict(model={**BASE, "d_model": 256, "n_layer": 4, "d_inner": 1024}, seg_len=128),
    "d256-L6-T128": dict(model={**BASE, "d_model": 256, "n_layer": 6, "d_inner": 1024}, seg_len=128),
    "d384-L4-T128": dict(
        model={**BASE, "d_model": 384, "n_layer": 4, "n_head": 6, "d_inner": 1536}, seg_len=128
    ),
    "d256-L4-T192": dict(model={**BASE, "d_model": 256, "n_layer": 4, "d_inner": 1024}, seg_len=192),
    "d256-L4-T128-div2": dict(
        model={**BASE, "d_model": 256, "n_layer": 4, "d_inner": 1024, "div_val": 2}, seg_len=128
    ),
}


def measure(name: str, spec: dict, args) -> dict:
    cfg = TrainConfig(
        data_dir=args.data,
        out_dir="runs/bench_unused",
        batch_size=args.batch,
        seg_len=spec["seg_len"],
        mem_len=spec["seg_len"],
        model=spec["model"],
        threads=args.threads,
        eval_every=0,
        warmup_steps=10,
    )
    trainer = Trainer(cfg)
    n_params = sum(p.numel() for p in trainer.module.parameters())
    trainer.train_step(trainer.stream.next_batch())  # warm-up (allocations, first memory)
    t0, tokens = time.perf_counter(), trainer.tokens
    for _ in range(args.steps):
        trainer.train_step(trainer.stream.next_batch())
    dt = time.perf_counter() - t0
    return {
        "config": name,
        "tok_s": (trainer.tokens - tokens) / dt,
        "s_per_step": dt / args.steps,
        "params_M": n_params / 1e6,
        "fp16_MB": n_params * 2 / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="runs/lm_data")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", nargs="*", help="candidate names to run (default: all)")
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = [measure(n, s, args) for n, s in CANDIDATES.items() if not args.only or n in args.only]
    base = rows[0]["tok_s"]
    for r in rows:
        r["ratio_to_first"] = r["tok_s"] / base
        print(json.dumps(r))


if __name__ == "__main__":
    main()
