"""The reader's margin for no answer (retrieval.reader.runtime.NONE_MARGINS): chosen on the CJRC validation
contexts, then read once on the held-apart split beside margin 0 (the reader's calibrated argmax).

The validation contexts are the tenth of the training split the reader kept for model selection
(`retrieval.reader.train.is_validation`); the held-apart split is `ldx eval qa`'s. Each context is read
once; every margin decodes the same head outputs (`Reader.decided_outputs`, the yes-no decider included).
The margin acts only on questions that cannot be answered yes or no. Chosen: the margin of the best
validation F1 (ties: the smaller). Held apart: EM / F1 / YES-NO / no-answer accuracy at margin 0 and at
the chosen one, and the paired differences with a 95% bootstrap interval over contexts.

    PYTHONPATH=. .venv/bin/python benchmarks/none_margin.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from pipeline.paths import SHARED_DATA
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.eval.metrics import best_over_golds
from retrieval.eval.qa import load_squad, score
from retrieval.reader.runtime import READER_FILE, decode, encode_text, load_reader
from retrieval.reader.train import is_validation

MARGINS = [round(0.25 * i, 2) for i in range(9)]  # 0 … 2
RESAMPLES = 2000


def read_split(reader, qa: Path, split: str) -> list[list[tuple]]:
    """Per context of the split ("validation" or "heldout"): (item, decode's inputs) per question."""
    contexts = []
    for context, items in load_squad(qa, "train" if split == "validation" else "heldout"):
        if split == "validation" and not is_validation(context):
            continue
        ctx = encode_text(reader.model, reader.tokenizer, context)
        questions = [reader.question(item.question) for item in items]
        start, end, cls = reader.decided_outputs(context, ctx, questions)
        contexts.append(
            [
                (item, (context, ctx, start[i], end[i], cls[i], q.types))
                for i, (item, q) in enumerate(zip(items, questions, strict=True))
            ]
        )
    return contexts


def answers(contexts: list[list[tuple]], margin: float) -> list[list[str]]:
    return [[decode(*inputs, none_margin=margin).answer for _, inputs in c] for c in contexts]


def metrics(contexts: list[list[tuple]], said: list[list[str]]) -> dict:
    items = [item for c in contexts for item, _ in c]
    preds = {
        item.qid: a for c, s in zip(contexts, said, strict=True) for (item, _), a in zip(c, s, strict=True)
    }
    return score(preds, items)


def per_context(contexts: list[list[tuple]], said: list[list[str]]) -> np.ndarray:
    """[contexts, 4]: sums of F1 and of right no-answers, and the counts of questions and unanswerable."""
    rows = []
    for c, s in zip(contexts, said, strict=True):
        f1 = sum(best_over_golds(a, item.golds)[1] for (item, _), a in zip(c, s, strict=True))
        none = [a == "" for (item, _), a in zip(c, s, strict=True) if item.impossible]
        rows.append([f1, sum(none), len(c), len(none)])
    return np.array(rows, dtype=np.float64)


def paired_interval(base: np.ndarray, new: np.ndarray, col: int, count: int, seed: int = 0) -> list[float]:
    """Difference of new - base in the ratio sum(col) / sum(count), 100×, with a bootstrap 95% interval
    over contexts."""
    rng = np.random.default_rng(seed)
    n = len(base)
    diffs = []
    for _ in range(RESAMPLES):
        pick = rng.integers(0, n, n)
        denom = max(base[pick, count].sum(), 1)
        diffs.append(100 * (new[pick, col].sum() - base[pick, col].sum()) / denom)
    point = 100 * (new[:, col].sum() - base[:, col].sum()) / max(base[:, count].sum(), 1)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return [round(float(point), 2), round(float(lo), 2), round(float(hi), 2)]


def shipped_reader(threads: int):
    """The shipped reader on the shipped encoder, read with `threads` torch threads."""
    torch.set_num_threads(threads)
    model, tok = load_encoder(checkpoint_file(None), "cpu")
    return load_reader(READER_FILE, model, tok)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qa", type=Path, default=SHARED_DATA / "zh" / "qa" / "cjrc_dev.json")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    reader = shipped_reader(args.threads)
    valid, held = read_split(reader, args.qa, "validation"), read_split(reader, args.qa, "heldout")
    sweep = {m: metrics(valid, answers(valid, m)) for m in MARGINS}
    chosen = max(MARGINS, key=lambda m: (sweep[m]["f1"], -m))
    said0, said = answers(held, 0.0), answers(held, chosen)
    base, new = per_context(held, said0), per_context(held, said)
    out = {
        "reader": str(READER_FILE),
        "validation": {
            str(m): {k: sweep[m][k] for k in ("f1", "no_answer_acc", "yes_no_acc")} for m in MARGINS
        },
        "chosen_margin": chosen,
        "shipped_margin": reader.none_margin,
        "heldout_margin_0": metrics(held, said0),
        "heldout_chosen": metrics(held, said),
        "heldout_difference": {
            "f1": paired_interval(base, new, 0, 2),
            "no_answer_acc": paired_interval(base, new, 1, 3),
        },
        "seconds": round(time.perf_counter() - t0, 1),
    }
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
