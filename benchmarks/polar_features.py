"""The yes-no decider with and without its bigram features (retrieval.reader.polar.bigram_features), in one
run: both fitted as `ldx train polar` fits it (logistic regression, inverse penalty 0.3) on the same
yes-no questions of the shipped reader's training contexts, the baseline on the first ten features (the
decider's inputs before the bigrams), then scored on the reader's validation contexts and on the
held-apart split `ldx eval qa` reads. Printed per split: accuracy over YES / NO / no answer, YES/NO
accuracy (questions answered yes or no) and no-answer accuracy among the yes-no questions; held apart, the
paired difference of YES/NO accuracy in points with a 95% bootstrap interval over contexts.

    PYTHONPATH=. .venv/bin/python benchmarks/polar_features.py [--threads 2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from none_margin import paired_interval, shipped_reader
from sklearn.linear_model import LogisticRegression

from pipeline.paths import SHARED_DATA
from retrieval.reader.polar import POLAR_LABELS, polar_features
from retrieval.reader.train_polar import polar_rows

BEFORE = 10  # the decider's inputs before the bigram features
PENALTY = 0.3  # PolarHead.fit's inverse penalty


def figures(pred: np.ndarray, gold: np.ndarray) -> dict:
    polar = gold < 2  # gold YES or NO
    return {
        "accuracy": round(float((pred == gold).mean()), 4),
        "yes_no_acc": round(float((pred[polar] == gold[polar]).mean()), 4),
        "no_answer_acc": round(float((pred[~polar] == gold[~polar]).mean()), 4),
        "questions": int(len(gold)),
    }


def context_table(right: np.ndarray, contexts: list[str]) -> np.ndarray:
    """[contexts, 2]: the right answers and the questions of each context (none_margin.paired_interval's
    table)."""
    ids = {c: i for i, c in enumerate(dict.fromkeys(contexts))}
    group = np.array([ids[c] for c in contexts])
    return np.stack([np.bincount(group, right, len(ids)), np.bincount(group, minlength=len(ids))], 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qa", type=Path, default=SHARED_DATA / "zh" / "qa" / "cjrc_dev.json")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    reader = shipped_reader(args.threads)
    rows = {**polar_rows(reader, args.qa), **polar_rows(reader, args.qa, "heldout")}
    x = {k: np.array([polar_features(q, c, s) for q, c, s, _ in v]) for k, v in rows.items()}
    y = {k: np.array([POLAR_LABELS.index(g) for *_, g in v]) for k, v in rows.items()}
    out: dict = {"train_questions": len(rows["train"])}
    pred = {}
    for name, width in (("before", BEFORE), ("bigrams", x["train"].shape[1])):
        model = LogisticRegression(C=PENALTY, max_iter=2000).fit(x["train"][:, :width], y["train"])
        for split in ("validation", "heldout"):
            pred[name, split] = model.predict(x[split][:, :width])
            out.setdefault(split, {})[name] = figures(pred[name, split], y[split])
    gold = y["heldout"]
    polar = gold < 2
    right = {n: (pred[n, "heldout"] == gold)[polar].astype(float) for n in ("before", "bigrams")}
    contexts = [c for (_, c, _, _), p in zip(rows["heldout"], polar, strict=True) if p]
    table = {n: context_table(r, contexts) for n, r in right.items()}
    # points of YES/NO accuracy: [difference, 95% interval low, high]
    out["heldout"]["yes_no_acc_difference"] = paired_interval(table["before"], table["bigrams"], 0, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
