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

from pipeline.paths import SHARED_DATA
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.eval.metrics import best_over_golds
from retrieval.eval.qa import load_squad, score
from retrieval.reader.runtime import READER_FILE, encode_text, load_reader


def read_heldout(reader, qa: Path) -> tuple[dict[str, str], list[list]]:
    """({question id: answer}, the held-apart items per context)."""
    said: dict[str, str] = {}
    contexts = []
    for context, items in load_squad(qa, "heldout"):
        ctx = encode_text(reader.model, reader.tokenizer, context)
        questions = [reader.question(item.question) for item in items]
        for item, pred in zip(items, reader.read_many(context, ctx, questions), strict=True):
            said[item.qid] = pred.answer
        contexts.append(items)
    return said, contexts


def per_context(said: dict[str, str], contexts: list[list]) -> np.ndarray:
    """[contexts, 5]: sums of F1, of EM and of right yes-no answers; counts of questions and of yes-no."""
    rows = []
    for items in contexts:
        em_f1 = [best_over_golds(said[it.qid], it.golds) for it in items]
        polar = [it for it in items if not it.impossible and it.golds[0] in ("YES", "NO")]
        right = sum(said[it.qid] == it.golds[0] for it in polar)
        rows.append([sum(f for _, f in em_f1), sum(e for e, _ in em_f1), right, len(items), len(polar)])
    return np.array(rows, dtype=np.float64)


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
    tables = {}
    for name, path in (("baseline", args.baseline), ("shipped", READER_FILE)):
        reader = load_reader(path, model, tok)
        said, contexts = read_heldout(reader, args.qa)
        items = [it for c in contexts for it in c]
        out[name] = {"reader": str(reader.checkpoint), **score(said, items)}
        tables[name] = per_context(said, contexts)
    base, new = tables["baseline"], tables["shipped"]
    out["difference"] = {
        "f1": paired_interval(base, new, 0, 3),
        "em": paired_interval(base, new, 1, 3),
        "yes_no_acc": paired_interval(base, new, 2, 4),
    }
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
