"""Retrieved memory during training, trained both ways: the same small model, data, seed and steps with
`inject_k` = 0 and with `inject_k` = K, then both evaluated on the same held-apart documents with memory
off, memory on, and memory + retrieved memory (each lane's own evicted windows, pooled as the trainer
and the retrieval store keep them). Prints one JSON line per (model, setting) with its perplexity, its
ratio to the same model's memory-on row, and the ratio of the injection-trained model to the plain one.

    nice -n 10 .venv/bin/python benchmarks/train_inject.py --data runs/lm_data --steps 300 --out runs/inject_cmp
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from txl.evaluate import evaluate_lm, pick_docs
from txl.streams import load_split
from txl.train import Trainer
from txl.train_config import load_train_config
from txl.windows import PastWindows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="data/configs/txl_lm_ablation.toml")
    ap.add_argument("--data", default="runs/lm_data")
    ap.add_argument("--out", default="runs/inject_cmp")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--k", type=int, default=2, help="retrieved windows per lane (training and evaluation)")
    ap.add_argument("--tokens-per-corpus", type=int, default=8000)
    ap.add_argument("--set", nargs="*", default=[], help="more key=value overrides of the training config")
    args = ap.parse_args()
    torch.set_num_threads(1)

    models = {}
    for name, k in (("plain", 0), ("inject", args.k)):
        cfg = load_train_config(
            args.config,
            [
                f"data_dir={json.dumps(args.data)}",
                f"out_dir={json.dumps(f'{args.out}/{name}')}",
                f"max_steps={args.steps}",
                f"inject_k={k}",
                "eval_every=0",
                "plot=false",
                *args.set,
            ],
        )
        t0 = time.time()
        trainer = Trainer(cfg)
        records = trainer.run(resume=False)
        train = [r for r in records if r["kind"] == "train"]
        print(
            json.dumps(
                {
                    "trained": name,
                    "inject_k": k,
                    "steps": trainer.step,
                    "tokens": trainer.tokens,
                    "final_loss": train[-1]["loss"] if train else None,
                    "seconds": round(time.time() - t0, 1),
                }
            ),
            flush=True,
        )
        models[name] = (trainer.module, cfg)

    data = Path(args.data)
    special = torch.tensor(json.loads((data / "manifest.json").read_text())["special_ids"])
    docs = pick_docs(load_split(data, "heldout"), None, args.tokens_per_corpus)
    results = {}
    for name, (model, cfg) in models.items():
        results[name] = evaluate_lm(
            model,
            docs,
            cfg.seg_len,
            special=special,
            n_lanes=8,
            retrieve_k=args.k,
            past_windows=lambda cfg=cfg: PastWindows(cfg.inject_states, cfg.inject_max_windows),
        )
    for name, by_setting in results.items():
        for setting, rows in by_setting.items():
            ppl = rows["all"]["ppl"]
            print(
                json.dumps(
                    {
                        "model": name,
                        "setting": setting,
                        "tokens": rows["all"]["tokens"],
                        "ppl": round(ppl, 3),
                        "bpc": round(rows["all"]["bpc"], 4),
                        "vs_memory_on": round(ppl / by_setting["memory"]["all"]["ppl"], 4),
                        "vs_plain_model": round(ppl / results["plain"][setting]["all"]["ppl"], 4),
                        "per_corpus_ppl": {c: round(r["ppl"], 2) for c, r in rows.items() if c != "all"},
                    },
                    ensure_ascii=False,
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
