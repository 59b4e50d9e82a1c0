"""Held-apart perplexity and bits per character of a language-model checkpoint, and its ablations.

Same weights, same held-apart documents (the first documents of each corpus's held-apart split, whole,
up to a token budget): memory off / on / on + retrieved memory (txl's in-memory stand-in with full
states at every layer, and the retrieval layer's SegmentStore as `ldx run` stores it, its windows keyed
by their mean top-layer state as in training and, in another row, by the shipped key head as `ldx run`
keys and looks up its segments; --stores adds
stores of other layouts, --read-layers stand-ins read at some layers only); block-type tags withheld;
connective marks withheld; a longer evaluation memory. Other checkpoints (e.g. trained without the connective
boost) can be added with --compare NAME=PATH and are evaluated on the same documents with memory on.
Prints one JSON line per row (with the ratio of its perplexity to the memory-off row of the main
checkpoint, measured in this process) and, with --markdown, the table for the model card.

Every row also reports perplexity on distant recalls (tokens whose trigram last occurred in the
document more than n_layer x mem_len tokens back) and over the clauses connectives open
(txl.lm_metrics), and the rows are compared token by token: memory on - off, every other row - memory
on, each with a document-bootstrap 95% interval (one JSON line per pair and corpus).

    .venv/bin/python benchmarks/lm_ablations.py --checkpoint data/models/txl_lm.pt --data runs/lm_data \
        --tokens-per-corpus 20000 --json-out runs/ablations.json --markdown
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path

import torch

from flows.lm_store import StorePastWindows
from pipeline.tokenizer import load_tokenizer
from retrieval.config import RetrievalConfig
from txl.checkpoint import load_model
from txl.evaluate import evaluate_lm, pick_docs
from txl.keys import attach, head_for
from txl.lm_metrics import (
    SUBSETS,
    add_subsets,
    distant_threshold,
    format_difference,
    format_figures,
    long_range_report,
    subset_masks,
)
from txl.streams import load_split
from txl.windows import PastWindows

HEAD_KEYED_ROW = "memory + retrieved (SegmentStore, keyed by the key head, as ldx run looks it up)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", default="data/models/txl_lm.pt")
    ap.add_argument("--data", default="runs/lm_data")
    ap.add_argument("--docs-per-corpus", type=int, default=None)
    ap.add_argument("--tokens-per-corpus", type=int, default=20_000)
    ap.add_argument("--lanes", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--long-mem", type=int, default=384, help="the longer evaluation memory of one row")
    ap.add_argument(
        "--stores",
        nargs="*",
        default=[],
        help="more SegmentStore rows, each P:LAYERS (states per layer : stored layers), e.g. 32:0,1,2,3",
    )
    ap.add_argument(
        "--read-layers",
        nargs="*",
        default=[],
        help="more stand-in rows (full states) read at these layers only",
    )
    ap.add_argument("--compare", nargs="*", default=[], help="NAME=PATH checkpoints evaluated with memory on")
    ap.add_argument("--rows", nargs="*", default=None, help="only these rows of the main checkpoint")
    ap.add_argument("--corpora", nargs="*", default=None, help="only these corpora of the data folder")
    ap.add_argument("--resamples", type=int, default=1000, help="document-bootstrap resamples of the pairs")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    data = Path(args.data)
    manifest = json.loads((data / "manifest.json").read_text())
    special = torch.tensor(manifest["special_ids"])
    docs = pick_docs(load_split(data, "heldout", args.corpora), args.docs_per_corpus, args.tokens_per_corpus)
    model, extra = load_model(args.checkpoint)
    model.float()
    seg_len = int(extra.get("seg_len", 128))
    # the key head `ldx run` uses with this checkpoint (none: the head-keyed row is left out)
    head = head_for(args.checkpoint)
    attach(model, head)

    tmp = tempfile.TemporaryDirectory(prefix="lm-ablations-")

    def store_windows(cfg: RetrievalConfig):
        return lambda: StorePastWindows(Path(tmp.name) / uuid.uuid4().hex, cfg)

    def store_config(spec: str) -> RetrievalConfig:
        p, _, layers = spec.partition(":")
        return RetrievalConfig(states_per_layer=int(p), state_layers=[int(i) for i in layers.split(",")])

    run_store = RetrievalConfig()
    rows = {
        "memory off": dict(settings=("none",)),
        "memory on": dict(settings=("memory",)),
        "memory + retrieved (stand-in, full states)": dict(settings=("retrieved",)),
        "memory + retrieved (SegmentStore, as ldx run stores it)": dict(
            settings=("retrieved",), past_windows=store_windows(run_store)
        ),
        **(
            {
                HEAD_KEYED_ROW: dict(
                    settings=("retrieved",), past_windows=store_windows(run_store), window_keys="head"
                )
            }
            if head is not None
            else {}
        ),
        **{
            f"memory + retrieved (SegmentStore, {spec.replace(':', ' states at layers ')})": dict(
                settings=("retrieved",), past_windows=store_windows(store_config(spec))
            )
            for spec in args.stores
        },
        **{
            f"memory + retrieved (stand-in, full states, layers {spec})": dict(
                settings=("retrieved",),
                past_windows=lambda spec=spec: PastWindows(layers=[int(i) for i in spec.split(",")]),
            )
            for spec in args.read_layers
        },
        "memory on, tags withheld": dict(settings=("memory",), tags=False),
        "memory on, connectives withheld": dict(settings=("memory",), connectives=False),
        f"memory on, eval mem_len {args.long_mem}": dict(settings=("memory",), mem_len=args.long_mem),
    }
    results = []
    token_nll: dict[str, list] = {}

    def run(name: str, m, seg: int, **kw) -> None:
        t0 = time.perf_counter()
        per_token: dict = {}
        out = evaluate_lm(m, docs, seg, special=special, n_lanes=args.lanes, token_nll=per_token, **kw)
        (setting,) = out
        results.append(
            {"row": name, "setting": setting, "seconds": round(time.perf_counter() - t0, 1), **out[setting]}
        )
        token_nll[name] = per_token[setting]

    for name, kw in rows.items():
        if args.rows is None or name in args.rows:
            run(name, model, seg_len, **kw)
    for item in args.compare:
        name, _, path = item.partition("=")
        other, other_extra = load_model(path)
        run(name, other.float(), int(other_extra.get("seg_len", seg_len)), settings=("memory",))

    threshold = distant_threshold(model)
    masks = subset_masks(docs, threshold, special.tolist(), load_tokenizer(manifest["tokenizer"]))
    report = long_range_report(docs, token_nll, masks, pairs(list(token_nll)), args.resamples)
    write_report(args, docs, results, report, threshold)


def write_report(args, docs: list, results: list[dict], report: dict, threshold: int) -> None:
    """JSON lines per row and per pair, and the --json-out file and --markdown tables."""
    base = next((r for r in results if r["row"] == "memory off"), results[0])
    for r in results:
        add_subsets({k: v for k, v in r.items() if isinstance(v, dict)}, report["settings"][r["row"]])
        r["ppl_ratio_to_memory_off"] = r["all"]["ppl"] / base["all"]["ppl"]
        print(
            json.dumps(
                {
                    "row": r["row"],
                    "ppl": r["all"]["ppl"],
                    "bpc": r["all"]["bpc"],
                    "ppl_distant_recall": r["all"]["distant_recall"]["ppl"],
                    "ppl_after_connective": r["all"]["after_connective"]["ppl"],
                    "ratio": r["ppl_ratio_to_memory_off"],
                    "seconds": r["seconds"],
                }
            )
        )
    for pair, groups in report["paired"].items():
        for corpus, d in groups.items():
            print(json.dumps({"pair": pair, "corpus": corpus, **{s: d[s] for s in SUBSETS}}))
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(
                {
                    "checkpoint": args.checkpoint,
                    "documents": len(docs),
                    "distant_threshold": threshold,
                    "rows": results,
                    "paired": report["paired"],
                },
                indent=1,
            )
        )
    if args.markdown:
        print(markdown(results))
        print()
        print(markdown_pairs(report["paired"]))


def pairs(rows: list[str]) -> list[tuple[str, str]]:
    """Memory on against memory off, every other row against memory on (when those rows ran)."""
    out = [("memory on", "memory off")] if {"memory on", "memory off"} <= set(rows) else []
    if "memory on" in rows:
        out += [(r, "memory on") for r in rows if r not in ("memory on", "memory off")]
    return out


def markdown(results: list[dict]) -> str:
    corpora = [
        c for c in results[0] if isinstance(results[0][c], dict) and "ppl" in results[0][c] and c != "all"
    ]
    head = (
        "| row | all: ppl | all: bpc | ppl on distant recalls (tokens) | ppl over connective clauses (tokens) | "
        + " | ".join(f"{c} ppl" for c in corpora)
        + " |"
    )
    lines = [head, "|" + "---|" * (5 + len(corpora))]
    for r in results:
        a = r["all"]
        lines.append(
            f"| {r['row']} | {a['ppl']:.2f} | {a['bpc']:.3f} | {format_figures(a['distant_recall'])} | "
            f"{format_figures(a['after_connective'])} | "
            + " | ".join(f"{r[c]['ppl']:.2f}" for c in corpora)
            + " |"
        )
    return "\n".join(lines)


def markdown_pairs(paired: dict) -> str:
    """Per-token NLL differences of the row pairs (all corpora together), with their 95% intervals."""
    lines = ["| pair | " + " | ".join(SUBSETS) + " |", "|" + "---|" * (1 + len(SUBSETS))]
    for pair, groups in paired.items():
        lines.append(f"| {pair} | " + " | ".join(format_difference(groups["all"][s]) for s in SUBSETS) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
