"""The shipped clause head (data/models/heads/clauses.npz) on CUAD contracts it never trained on, beside
the shipped reader and the overlap baseline in the same run.

1. `ldx eval cuad`'s measurement on the first `--reader-contracts` held-apart contracts: AUPR of the
   reader (its best span over the top 5 BM25 passages), the baseline and the clause head (its likeliest
   sentence of the whole contract, or the name or date in it), on the same questions.
2. The clause head on every held-apart contract: AUPR with a 95% bootstrap interval over contracts, and
   the questions found per category; beside it the same head answering with whole sentences only (no
   title, party or date cut out of them), with the paired difference.
3. The "clause" rows `ldx run` writes (a category whose likeliest sentence reaches the probability):
   precision (that sentence holds a gold clause of the category, `clauses.overlapping`) and recall (the
   answerable questions with such a row) at several thresholds, PredictConfig's default among them.

    PYTHONPATH=. .venv/bin/python benchmarks/clause_head.py [--reader-contracts 20] [--threads 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np
from none_margin import shipped_reader

from pipeline.paths import CLAUSE_HEAD, SHARED_DATA
from retrieval.eval.cuad import (
    aupr,
    clause_figures,
    clause_questions,
    evaluate_clauses,
    evaluate_cuad,
    load_cuad,
)
from retrieval.predict.clauses import ClauseHead, overlapping
from retrieval.predict.config import PredictConfig

THRESHOLDS = (0.3, 0.5, 0.7, 0.9)


def per_contract(answered: list, contracts: list) -> list[list[tuple[float, bool, bool]]]:
    """(confidence, right, answerable) of each contract's questions."""
    of = {cq.qid: i for i, k in enumerate(contracts) for cq in k.questions}
    out: list[list] = [[] for _ in contracts]
    for cq, hit, ok in answered:
        out[of[cq.qid]].append((hit.confidence, ok, bool(cq.golds)))
    return out


def bootstrap_aupr(arms: dict[str, list], resamples: int = 1000, seed: int = 0) -> dict[str, list[float]]:
    """95% intervals of each arm's AUPR and of the first arm minus each other, contracts drawn with
    replacement (the same draws for every arm)."""
    rng = np.random.default_rng(seed)
    n = len(next(iter(arms.values())))
    areas: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(resamples):
        draw = rng.integers(0, n, n)
        for name, rows in arms.items():
            drawn = [row for i in draw for row in rows[i]]
            areas[name].append(aupr([(c, ok) for c, ok, _ in drawn], sum(a for *_, a in drawn))[0])
    first, *others = arms
    diffs = {f"{first} - {o}": np.subtract(areas[first], areas[o]) for o in others}
    return {
        name: [round(float(q), 4) for q in np.quantile(v, [0.025, 0.975])]
        for name, v in {**areas, **diffs}.items()
    }


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
    ap.add_argument("--head", type=Path, default=CLAUSE_HEAD)
    ap.add_argument("--reader-contracts", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    head = ClauseHead.load(args.head)
    # the same head answering every category with its likeliest sentence, no name or date cut out of it
    sentences = dataclasses.replace(head, kinds=["sentence"] * len(head.kinds))
    result = {
        "head": str(args.head),
        "head_meta": head.meta,
        "kinds": dict(zip(head.categories, head.kinds, strict=True)),
    }
    if args.reader_contracts:
        cuad = evaluate_cuad(shipped_reader(args.threads), args.data, args.reader_contracts, clauses=head)
        first = load_cuad(args.data, "heldout", args.reader_contracts)
        result["same_questions"] = {
            "contracts": cuad["contracts"],
            "questions": cuad["questions"],
            "answerable": cuad["answerable"],
            **{name: cuad[name]["aupr"] for name in ("reader", "baseline")},
            "clauses": cuad["clauses"]["aupr"],
            "clauses, sentences only": evaluate_clauses(sentences, first)["aupr"],
        }
    held = load_cuad(args.data, "heldout", None)
    answered = {
        "clauses": clause_questions(head, held),
        "clauses, sentences only": clause_questions(sentences, held),
    }
    result["all_held_apart"] = {
        name: {**clause_figures(a), "contracts": len(held)} for name, a in answered.items()
    }
    result["all_held_apart"]["aupr_95"] = bootstrap_aupr(
        {name: per_contract(a, held) for name, a in answered.items()}
    )
    result["rows"] = {"default_min_probability": PredictConfig().clause_min_probability}
    result["rows"].update(row_figures(answered["clauses"]))
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
