"""The shipped reader against an earlier one (a reader file with its yes-no decider beside it), both read
as `ldx eval qa` reads them (answer types by the question's form, each file's decider and no-answer margin,
two-part questions in parts) on the same held-apart CJRC split, in one run. Printed: each reader's
figures and the paired differences of F1, EM and YES/NO accuracy in points, with a 95% bootstrap interval
over contexts.

    git show ff18a2d:data/models/reader.pt > /tmp/old/reader.pt
    git show ff18a2d:data/models/polar.json > /tmp/old/polar.json
    PYTHONPATH=. .venv/bin/python benchmarks/reader_sittings.py --baseline /tmp/old/reader.pt
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from none_margin import paired_interval
from polar_features import context_table

from pipeline.paths import SHARED_DATA
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.eval.metrics import best_over_golds
from retrieval.eval.qa import QAItem, load_squad, score
from retrieval.reader.runtime import READER_FILE, encode_text, load_reader


def read_heldout(reader, qa: Path) -> list[tuple[str, QAItem, str]]:
    """(context, item, answer) of every held-apart question, in the file's order."""
    rows = []
    for context, items in load_squad(qa, "heldout"):
        ctx = encode_text(reader.model, reader.tokenizer, context)
        questions = [reader.question(item.question) for item in items]
        for item, pred in zip(items, reader.read_many(context, ctx, questions), strict=True):
            rows.append((context, item, pred.answer))
    return rows


def tables(rows: list[tuple[str, QAItem, str]]) -> dict[str, np.ndarray]:
    """Per measure, its per-context table (`polar_features.context_table`): F1 and EM over every question,
    right answers over the yes-no ones."""
    contexts = [c for c, _, _ in rows]
    em_f1 = np.array([best_over_golds(said, item.golds) for _, item, said in rows])
    polar = [
        (c, said == it.golds[0]) for c, it, said in rows if not it.impossible and it.golds[0] in ("YES", "NO")
    ]
    return {
        "f1": context_table(em_f1[:, 1], contexts),
        "em": context_table(em_f1[:, 0], contexts),
        "yes_no_acc": context_table(np.array([r for _, r in polar], float), [c for c, _ in polar]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="an earlier reader.pt (polar.json beside)")
    ap.add_argument("--qa", type=Path, default=SHARED_DATA / "zh" / "qa" / "cjrc_dev.json")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    t0 = time.perf_counter()
    torch.set_num_threads(args.threads)
    model, tok = load_encoder(checkpoint_file(None), "cpu")  # each reader reads with its own tuned copy
    out: dict = {}
    table = {}
    for name, path in (("baseline", args.baseline), ("shipped", READER_FILE)):
        reader = load_reader(path, model, tok)
        rows = read_heldout(reader, args.qa)
        out[name] = {
            "reader": str(reader.checkpoint),
            **score({it.qid: a for _, it, a in rows}, [it for _, it, _ in rows]),
        }
        table[name] = tables(rows)
    out["difference"] = {
        k: paired_interval(table["baseline"][k], table["shipped"][k], 0, 1) for k in table["shipped"]
    }
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
