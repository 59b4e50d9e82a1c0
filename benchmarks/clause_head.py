"""The shipped clause head (data/models/heads/clauses.npz) on CUAD contracts it never trained on, beside
the shipped reader and the overlap baseline in the same run.

1. `ldx eval cuad`'s measurement on the first `--reader-contracts` held-apart contracts: AUPR of the
   reader (its best span over the top 5 BM25 passages), the baseline and the clause head (its best
   sentence of the whole contract), on the same questions.
2. The clause head on every held-apart contract: AUPR with a 95% bootstrap interval over contracts, and
   the questions found per category.
3. The "clause" rows `ldx run` writes (a category whose likeliest sentence reaches the probability):
   precision (that sentence holds a gold clause of the category, `clauses.overlapping`) and recall (the
   answerable questions with such a row) at several thresholds, PredictConfig's default among them.

    PYTHONPATH=. .venv/bin/python benchmarks/clause_head.py [--reader-contracts 20] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from none_margin import shipped_reader

from pipeline.paths import HEADS_DIR, SHARED_DATA
from retrieval.eval.cuad import aupr, clause_questions, evaluate_clauses, evaluate_cuad, load_cuad
from retrieval.predict.clauses import ClauseHead, overlapping
from retrieval.predict.config import PredictConfig

THRESHOLDS = (0.3, 0.5, 0.7, 0.9)


def bootstrap_aupr(answered: list, contracts: list, resamples: int = 1000, seed: int = 0) -> list[float]:
    """95% interval of the clause head's AUPR, contracts drawn with replacement."""
    of = {k.doc_id: i for i, k in enumerate(contracts)}
    by_contract: list[list] = [[] for _ in contracts]
    ids = {cq.qid: of[k.doc_id] for k in contracts for cq in k.questions}
    for cq, hit, ok in answered:
        by_contract[ids[cq.qid]].append((hit.confidence, ok, bool(cq.golds)))
    rng = np.random.default_rng(seed)
    areas = []
    for _ in range(resamples):
        drawn = [row for i in rng.integers(0, len(contracts), len(contracts)) for row in by_contract[i]]
        areas.append(aupr([(c, ok) for c, ok, _ in drawn], sum(a for *_, a in drawn))[0])
    return [round(float(q), 4) for q in np.quantile(areas, [0.025, 0.975])]


def row_figures(answered: list) -> dict:
    """Precision and recall of the clause rows at each threshold."""
    rows = []
    for cq, hit, _ in answered:
        golds = [(s, s + len(g)) for s, g in zip(cq.starts, cq.golds, strict=True)]
        holds = bool(golds) and bool(overlapping([(hit.start, hit.end)], golds)[0])
        rows.append((hit.probability, holds, bool(cq.golds)))
    answerable = sum(a for *_, a in rows)
    out = {}
    for t in THRESHOLDS:
        given = [(h, a) for p, h, a in rows if p >= t]
        right = sum(h for h, _ in given)
        out[f"{t:g}"] = {
            "rows": len(given),
            "precision": round(right / len(given), 4) if given else None,
            "recall": round(right / answerable, 4),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED_DATA / "en" / "contracts")
    ap.add_argument("--head", type=Path, default=HEADS_DIR / "clauses.npz")
    ap.add_argument("--reader-contracts", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    head = ClauseHead.load(args.head)
    result = {"head": str(args.head), "head_meta": head.meta}
    if args.reader_contracts:
        cuad = evaluate_cuad(shipped_reader(args.threads), args.data, args.reader_contracts, clauses=head)
        result["same_questions"] = {
            "contracts": cuad["contracts"],
            "questions": cuad["questions"],
            "answerable": cuad["answerable"],
            **{name: cuad[name]["aupr"] for name in ("reader", "baseline")},
            "clauses": cuad["clauses"]["aupr"],
        }
    held = load_cuad(args.data, "heldout", None)
    answered = clause_questions(head, held)
    result["all_held_apart"] = {
        **evaluate_clauses(head, held),
        "contracts": len(held),
        "aupr_95": bootstrap_aupr(answered, held),
    }
    result["rows"] = {"default_min_probability": PredictConfig().clause_min_probability}
    result["rows"].update(row_figures(answered))
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
