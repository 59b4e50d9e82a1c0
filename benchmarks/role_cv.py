"""Block-role head: choose its options by cross-validation over the *training* judgments only, grouped by
judgment, so the held-apart sets of benchmarks/predict_roles.py stay a test set read once per final
configuration.

The 26 Indian training judgments (not `is_held_apart`) and the Chinese training judgments of
predict_roles.py are each cut into `--folds` groups of whole judgments; each fold trains the head on the
others (Chinese ones as written and with markers removed, as train_role_head does) and scores the
Indian judgments and the Chinese ones (markers removed) of the fold. The decoding options (`smoothing`,
`debias`) are swept on the same trained heads, since they change no weights.

    nice -n 10 .venv/bin/python benchmarks/role_cv.py --options '{"future": true}' [--smoothing 0 0.5 1] \
        [--debias 0 0.5]

Prints one JSON object per (smoothing, debias) pair: pooled CV accuracy / macro-F1 (over all units of all folds)
and the per-role figures of the Indian units.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import time
from pathlib import Path

import torch
from predict_roles import zh_docs

from pipeline.paths import SHARED_DATA
from pipeline.records import BlockType
from retrieval.predict.train import (
    ZH_MARKERS,
    LabelledDoc,
    is_held_apart,
    load_india,
    role_scores,
    train_role_head,
    zh_units,
)


def training_sets(cache: Path, zh_n: int, clcr_n: int) -> tuple[list, list]:
    """(Indian, Chinese) training judgments as LabelledDocs; the parsed Chinese ones are cached (JSON)."""
    india = load_india(SHARED_DATA / "en/judgments/india_sc_roles.jsonl")
    india = [d for d in india if not is_held_apart(d.doc_id)]
    path = cache / f"zh-train-{zh_n}-{clcr_n}.json"
    if path.exists():
        return india, [_doc_from_json(d) for d in json.loads(path.read_text())]
    zh = SHARED_DATA / "zh/judgments"
    docs = [zh_units(d) for d in zh_docs(zh / "judge_criminal.jsonl.gz", "fd", zh_n, held=False)]
    docs += [zh_units(d) for d in zh_docs(zh / "clcr_cases.jsonl.gz", "text", clcr_n, held=False)]
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([_doc_to_json(d) for d in docs], ensure_ascii=False))
    return india, docs


def _doc_to_json(doc: LabelledDoc) -> dict:
    gold = [sorted(g) for g in doc.gold]
    return {"doc_id": doc.doc_id, "units": doc.units, "gold": gold, "train": list(doc.train)}


def _doc_from_json(row: dict) -> LabelledDoc:
    gold = [{BlockType(t) for t in g} for g in row["gold"]]
    return LabelledDoc(row["doc_id"], row["units"], gold, [BlockType(t) for t in row["train"]])


def folds_of(docs: list, k: int, seed: int) -> list[list]:
    order = sorted(docs, key=lambda d: d.doc_id)
    random.Random(seed).shuffle(order)
    return [order[i::k] for i in range(k)]


def strip(doc):
    """A Chinese training judgment with its markers removed, as the held-apart set reads it."""
    units = [ZH_MARKERS.sub("", u) for u in doc.units]
    keep = [i for i, u in enumerate(units) if u.strip()]
    return LabelledDoc(
        doc.doc_id, [units[i] for i in keep], [doc.gold[i] for i in keep], [doc.train[i] for i in keep]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--options", type=json.loads, default={}, help="RoleHead fields, as JSON")
    ap.add_argument("--smoothing", type=float, nargs="+", default=[0.0])
    ap.add_argument("--debias", type=float, nargs="+", default=[0.0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--members", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--zh-docs", type=int, default=150)
    ap.add_argument("--clcr-docs", type=int, default=30)
    ap.add_argument("--cache", type=Path, default=Path("runs/role-cv"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    india, zh = training_sets(args.cache, args.zh_docs, args.clcr_docs)
    in_folds, zh_folds = folds_of(india, args.folds, args.seed), folds_of(zh, args.folds, args.seed)
    grid = list(itertools.product(args.smoothing, args.debias))
    decoded = {s: {"india": [], "zh": []} for s in grid}
    scored = {"india": [], "zh": []}
    t0 = time.process_time()
    for k in range(args.folds):
        rest = [d for j, f in enumerate(in_folds) if j != k for d in f]
        rest_zh = [d for j, f in enumerate(zh_folds) if j != k for d in f]
        head = train_role_head(
            rest, rest_zh, epochs=args.epochs, seed=args.seed, members=args.members, options=args.options
        )
        held = {"india": in_folds[k], "zh": [strip(d) for d in zh_folds[k]]}
        for name, docs in held.items():
            scored[name] += docs
            probs = head.predict_proba([d.units for d in docs])
            for s in grid:
                head.smoothing, head.debias = s
                decoded[s][name] += [head.decode(p) for p in probs]
    for s in grid:
        india_r = role_scores(scored["india"], decoded[s]["india"], per_role=True)
        zh_r = role_scores(scored["zh"], decoded[s]["zh"])
        print(
            json.dumps(
                {
                    "options": args.options,
                    "smoothing": s[0],
                    "debias": s[1],
                    "india_cv": {k: round(v, 4) for k, v in india_r.items() if isinstance(v, float)},
                    "zh_cv_markers_removed": {
                        k: round(v, 4) for k, v in zh_r.items() if isinstance(v, float)
                    },
                    "india_per_role_f1": {r: round(v["f1"], 3) for r, v in india_r["per_role"].items()},
                    "cpu_s": round(time.process_time() - t0),
                }
            )
        )


if __name__ == "__main__":
    main()
