"""Held-apart perplexity and bits per character of a language-model checkpoint, and its ablations.

Same weights, same held-apart documents (the first documents of each corpus's held-apart split, whole,
up to a token budget): memory off / on / on + retrieved memory (txl's in-memory stand-in with full
states, and the retrieval layer's SegmentStore with pooled states); block-type tags withheld;
connective marks withheld; a longer evaluation memory. Other checkpoints (e.g. trained without the connective
boost) can be added with --compare NAME=PATH and are evaluated on the same documents with memory on.
Prints one JSON line per row (with the ratio of its perplexity to the memory-off row of the main
checkpoint, measured in this process) and, with --markdown, the table for the model card.

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
from retrieval.config import RetrievalConfig
from txl.checkpoint import load_model
from txl.evaluate import evaluate_lm, pick_docs
from txl.streams import load_split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", default="data/models/txl_lm.pt")
    ap.add_argument("--data", default="runs/lm_data")
    ap.add_argument("--docs-per-corpus", type=int, default=None)
    ap.add_argument("--tokens-per-corpus", type=int, default=20_000)
    ap.add_argument("--lanes", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--long-mem", type=int, default=384, help="the longer evaluation memory of one row")
    ap.add_argument("--compare", nargs="*", default=[], help="NAME=PATH checkpoints evaluated with memory on")
    ap.add_argument("--rows", nargs="*", default=None, help="only these rows of the main checkpoint")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    data = Path(args.data)
    manifest = json.loads((data / "manifest.json").read_text())
    special = torch.tensor(manifest["special_ids"])
    docs = pick_docs(load_split(data, "heldout"), args.docs_per_corpus, args.tokens_per_corpus)
    model, extra = load_model(args.checkpoint)
    model.float()
    seg_len = int(extra.get("seg_len", 128))

    tmp = tempfile.TemporaryDirectory(prefix="lm-ablations-")

    def store_windows() -> StorePastWindows:
        return StorePastWindows(Path(tmp.name) / uuid.uuid4().hex, RetrievalConfig())

    rows = {
        "memory off": dict(settings=("none",)),
        "memory on": dict(settings=("memory",)),
        "memory + retrieved (stand-in, full states)": dict(settings=("retrieved",)),
        "memory + retrieved (SegmentStore, pooled states)": dict(settings=("retrieved",), past_windows=store_windows),
        "memory on, tags withheld": dict(settings=("memory",), tags=False),
        "memory on, connectives withheld": dict(settings=("memory",), connectives=False),
        f"memory on, eval mem_len {args.long_mem}": dict(settings=("memory",), mem_len=args.long_mem),
    }
    results = []

    def run(name: str, m, seg: int, **kw) -> None:
        t0 = time.perf_counter()
        out = evaluate_lm(m, docs, seg, special=special, n_lanes=args.lanes, **kw)
        (setting,) = out
        results.append({"row": name, "setting": setting, "seconds": round(time.perf_counter() - t0, 1), **out[setting]})

    for name, kw in rows.items():
        if args.rows is None or name in args.rows:
            run(name, model, seg_len, **kw)
    for item in args.compare:
        name, _, path = item.partition("=")
        other, other_extra = load_model(path)
        run(name, other.float(), int(other_extra.get("seg_len", seg_len)), settings=("memory",))

    base = next((r for r in results if r["row"] == "memory off"), results[0])
    for r in results:
        r["ppl_ratio_to_memory_off"] = r["all"]["ppl"] / base["all"]["ppl"]
        print(json.dumps({"row": r["row"], "ppl": r["all"]["ppl"], "bpc": r["all"]["bpc"],
                          "ppl_after_connective": r["all"]["after_connective"]["ppl"],
                          "ratio": r["ppl_ratio_to_memory_off"], "seconds": r["seconds"]}))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"checkpoint": args.checkpoint, "documents": len(docs),
                                                   "rows": results}, indent=1))
    if args.markdown:
        print(markdown(results))


def markdown(results: list[dict]) -> str:
    corpora = [c for c in results[0] if isinstance(results[0][c], dict) and "ppl" in results[0][c] and c != "all"]
    head = "| row | all: ppl | all: bpc | ppl after a connective | " + " | ".join(f"{c} ppl" for c in corpora) + " |"
    lines = [head, "|" + "---|" * (4 + len(corpora))]
    for r in results:
        a = r["all"]
        lines.append(
            f"| {r['row']} | {a['ppl']:.2f} | {a['bpc']:.3f} | {a['after_connective']['ppl']:.2f} "
            f"({a['after_connective']['tokens']} tok) | " + " | ".join(f"{r[c]['ppl']:.2f}" for c in corpora) + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
