"""Trained variants of the small language model (issue 19, item 5): where block-type tags and connectives
can act, each trained from scratch on the small config for several seeds and compared on the same
held-apart documents with memory on.

    baseline        data/configs/txl_lm_ablation.toml as it is (tag bias on, connective boost learned)
    tags_off        no tag bias
    tag_embedding   + a learned vector per block type added to the layer-0 input (txl.features)
    no_blk_tokens   the <blk_X> tokens left out of the streams (block types stay on the tokens)
    clause_scope    + a learned vector added to every token inside a connective's clause (causal flag,
                    txl.streams.clause_scope)
    boost_off       no connective boost

Every variant differs from the baseline in that one thing. Each run trains in its own folder,
runs/variants/steps<N>/<variant>-seed<S>/, and is skipped when its exported model (model.pt) holds
all N steps; an unfinished run resumes from its checkpoint. Per variant the script prints the mean ±
sd of held-apart perplexity over seeds, the difference to the baseline's mean (with the standard error
of that difference from the two seed spreads, and whether the variant beats the baseline by more than
either seed sd), and the per-token paired NLL difference to the baseline, token by token on the same
tokens with both sides averaged over the same seeds, with a document-bootstrap 95% interval
(txl.lm_metrics.paired), overall, on distant recalls and over connective clauses. One JSON line per
run, per variant and per (variant, seed) pair; --markdown adds the table.

    .venv/bin/python benchmarks/lm_variants.py --steps 300 --markdown --json-out runs/variants/steps300.json
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import time
import tomllib
from pathlib import Path

import numpy as np
import torch

from txl.checkpoint import load_model
from txl.evaluate import evaluate_lm, pick_docs
from txl.lm_metrics import SUBSETS, distant_threshold, format_difference, paired, subset_masks
from txl.streams import EncodedDoc, load_split, manifest_tokenizer, stream_variant
from txl.train import Trainer
from txl.train_config import TrainConfig

VARIANTS: dict[str, dict] = {
    "baseline": {},
    "tags_off": {"model": {"tag_bias": False}},
    "tag_embedding": {"model": {"tag_embedding": True}},
    "no_blk_tokens": {"strip_block_tokens": True},
    "clause_scope": {"model": {"scope_embedding": True}},
    "boost_off": {"model": {"connective_boost": "off"}},
}


def run_config(args, variant: str, seed: int) -> TrainConfig:
    """The small config with one variant's change, this seed, the step budget and its own folder."""
    raw = tomllib.loads(Path(args.config).read_text(encoding="utf-8"))
    data = copy.deepcopy(raw.get("train", raw))
    change = VARIANTS[variant]
    data["model"] = {**data.get("model", {}), **change.get("model", {})}
    data.update({k: v for k, v in change.items() if k != "model"})
    out = Path(args.out) / f"steps{args.steps}" / f"{variant}-seed{seed}"
    data.update(
        out_dir=str(out),
        seed=seed,
        max_steps=args.steps,
        threads=args.threads,
        eval_every=0,
        plot=False,
        export_fp16=str(out / "model.pt"),
    )
    if args.data:
        data["data_dir"] = args.data
    if args.warmup is not None:
        data["warmup_steps"] = args.warmup
    return TrainConfig.model_validate(data)


def finished(cfg: TrainConfig) -> bool:
    path = Path(cfg.export_fp16)
    return (
        path.is_file() and int(torch.load(path, weights_only=True)["extra"].get("step", 0)) >= cfg.max_steps
    )


def train(cfg: TrainConfig) -> float:
    """Train one run (resuming it if it was cut off); seconds spent, 0 when it was already done."""
    if finished(cfg):
        return 0.0
    t0 = time.perf_counter()
    Trainer(cfg).run()
    return time.perf_counter() - t0


def evaluate(args, cfg: TrainConfig, docs: list[EncodedDoc], special: torch.Tensor, drop: np.ndarray):
    """(held-apart metrics with memory on, per-document token NLLs at the original documents' positions)."""
    model, extra = load_model(cfg.export_fp16)
    model.float()
    variant_docs = stream_variant(
        docs, Path(cfg.data_dir), scope=model.cfg.scope_embedding, strip_blocks=cfg.strip_block_tokens
    )
    per_token: dict = {}
    result = evaluate_lm(
        model,
        variant_docs,
        int(extra.get("seg_len", cfg.seg_len)),
        settings=("memory",),
        special=special,
        n_lanes=args.lanes,
        token_nll=per_token,
    )
    nll = per_token["memory"]
    if cfg.strip_block_tokens:  # back to the positions of the documents with their block tokens
        nll = [_expand(x, ~np.isin(d.ids, drop)) for x, d in zip(nll, docs, strict=True)]
    return result["memory"]["all"], nll


def _expand(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    full = np.full(len(keep), np.nan, dtype=values.dtype)
    full[keep] = values
    return full


def summarize(runs: dict, docs, masks, resamples: int) -> list[dict]:
    """Per variant: perplexity over seeds, its difference to the baseline, and the paired token NLLs."""
    base = runs["baseline"]
    base_ppl = [r["ppl"] for r in base.values()]
    out = []
    for variant, by_seed in runs.items():
        ppl = [r["ppl"] for r in by_seed.values()]
        row = {"variant": variant, "seeds": sorted(by_seed), "ppl_mean": statistics.fmean(ppl)}
        row["ppl_sd"] = statistics.stdev(ppl) if len(ppl) > 1 else None
        if variant != "baseline":
            row["ppl_diff"] = row["ppl_mean"] - statistics.fmean(base_ppl)
            # a spread needs two seeds on each side; with fewer there is none to beat
            spread = len(ppl) > 1 and len(base_ppl) > 1
            b_sd, v_sd = (statistics.stdev(base_ppl), row["ppl_sd"]) if spread else (None, None)
            row["ppl_diff_se"] = math.sqrt(v_sd**2 / len(ppl) + b_sd**2 / len(base_ppl)) if spread else None
            row["beats_seed_spread"] = -row["ppl_diff"] > max(b_sd, v_sd) if spread else None
            seeds = sorted(set(by_seed) & set(base))
            mean_v = _seed_mean([by_seed[s]["nll"] for s in seeds])
            mean_b = _seed_mean([base[s]["nll"] for s in seeds])
            row["paired_seeds"] = seeds
            row["paired"] = paired(docs, mean_v, mean_b, masks, resamples)["all"]
            row["paired_per_seed"] = {
                s: paired(docs, by_seed[s]["nll"], base[s]["nll"], masks, resamples)["all"]["overall"]
                for s in seeds
            }
        out.append(row)
    return out


def _seed_mean(per_seed: list[list[np.ndarray]]) -> list[np.ndarray]:
    """Per document, the token NLLs averaged over seeds (every run scores the same tokens)."""
    return [np.mean(np.stack(arrays), 0) for arrays in zip(*per_seed, strict=True)]


def markdown(rows: list[dict]) -> str:
    head = (
        "| variant | seeds | held-apart ppl (mean ± sd) | Δ ppl vs baseline (± se) | beats seed spread | "
        + " | ".join(f"paired ΔNLL/token: {s}" for s in SUBSETS)
        + " |"
    )
    lines = [head, "|" + "---|" * (5 + len(SUBSETS))]
    for r in rows:
        sd = f" ± {r['ppl_sd']:.2f}" if r["ppl_sd"] is not None else ""
        if r["variant"] == "baseline":
            rest = ["-", "-", *["-"] * len(SUBSETS)]
        else:
            se = f" ± {r['ppl_diff_se']:.2f}" if r["ppl_diff_se"] is not None else ""
            beats = {True: "yes", False: "no", None: "- (one seed)"}[r["beats_seed_spread"]]
            rest = [
                f"{r['ppl_diff']:+.2f}{se}",
                beats,
                *(format_difference(r["paired"][s]) for s in SUBSETS),
            ]
        lines.append(
            f"| {r['variant']} | {len(r['seeds'])} | {r['ppl_mean']:.2f}{sd} | " + " | ".join(rest) + " |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="data/configs/txl_lm_ablation.toml")
    ap.add_argument("--data", default=None, help="prepared data folder (default: the config's data_dir)")
    ap.add_argument("--out", default="runs/variants")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    ap.add_argument("--steps", type=int, required=True, help="optimizer steps of every run")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps (default: the config's)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--docs-per-corpus", type=int, default=None)
    ap.add_argument("--tokens-per-corpus", type=int, default=20_000)
    ap.add_argument("--lanes", type=int, default=8)
    ap.add_argument("--resamples", type=int, default=1000, help="document-bootstrap resamples of the pairs")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if "baseline" not in args.variants:
        ap.error("--variants must include baseline: every other variant is compared with it")
    torch.set_num_threads(args.threads)

    configs = {(v, s): run_config(args, v, s) for v in args.variants for s in args.seeds}
    data = Path(next(iter(configs.values())).data_dir)
    manifest = json.loads((data / "manifest.json").read_text())
    special = torch.tensor(manifest["special_ids"])
    tokenizer = manifest_tokenizer(data)
    drop = np.asarray(sorted(tokenizer.block_ids.values()), dtype=np.int64)
    docs = pick_docs(load_split(data, "heldout"), args.docs_per_corpus, args.tokens_per_corpus)

    runs: dict[str, dict[int, dict]] = {v: {} for v in args.variants}
    for (variant, seed), cfg in configs.items():
        seconds = train(cfg)
        torch.set_num_threads(args.threads)  # the trainer sets its own
        t0 = time.perf_counter()
        metrics, nll = evaluate(args, cfg, docs, special, drop)
        runs[variant][seed] = {"ppl": metrics["ppl"], "bpc": metrics["bpc"], "nll": nll}
        line = {"variant": variant, "seed": seed, "ppl": metrics["ppl"], "bpc": metrics["bpc"]}
        line |= {"tokens": metrics["tokens"], "train_seconds": round(seconds, 1)}
        print(json.dumps(line | {"eval_seconds": round(time.perf_counter() - t0, 1)}), flush=True)

    threshold = distant_threshold(load_model(configs["baseline", args.seeds[0]].export_fp16)[0])
    masks = subset_masks(docs, threshold, special.tolist(), tokenizer)
    rows = summarize(runs, docs, masks, args.resamples)
    for r in rows:
        print(json.dumps({k: v for k, v in r.items() if k != "paired_per_seed"}))
        for seed, d in r.get("paired_per_seed", {}).items():
            print(json.dumps({"pair": f"{r['variant']} - baseline", "seed": seed, "overall": d}))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(
            json.dumps({"steps": args.steps, "documents": len(docs), "variants": rows})
        )
    if args.markdown:
        print(markdown(rows))


if __name__ == "__main__":
    main()
