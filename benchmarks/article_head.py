"""The 刑法 article head as `ldx train articles` builds it, against a variant, on the same cases in one run:

- `--compare views` (the default): the judgment head (`articles_judgment.npz`: the facts, then the court's
  reasoning and sentence with every article reference cut) against the facts head (`articles.npz`: the
  facts alone, what every head read before);
- `--compare stackers`: the facts head against the same head without its per-article stackers
  (`ArticleHead.min_stack` out of reach: every article read by the shared stacker, the design before the
  sentencing-circumstance cues).

Both heads train on every file's cases outside the held-apart quarter (`retrieval.predict.train.
is_held_apart`) with the charge channel on (the training verdicts' charge → article table and the
article texts), as the shipped head does. Printed per member seed: micro- and macro-F1 on each file's
held-apart cases, and the paired difference of micro-F1 with a case-bootstrap 95% interval; then the
same two designs cross-validated over the training cases alone (5 folds, every fold's heads trained on
the other four), where the choice between them was made.

    .venv/bin/python benchmarks/article_head.py [--compare views|stackers] [--seeds 0 1 2] [--folds 5] [--json]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from sklearn.model_selection import KFold

from pipeline.paths import SHARED_DATA
from retrieval.predict.criminal import CriminalCase, StatuteIndex, charge_articles, load_criminal
from retrieval.predict.heads import ArticleHead
from retrieval.predict.train import is_held_apart, multilabel_f1

JUDGMENTS = SHARED_DATA / "zh/judgments"
FILES = ["judge_criminal.jsonl.gz", "clcr_cases.jsonl.gz", "wenshu_mixed.jsonl"]
# design name -> (min_stack, view); the first of each pair is the shipped one
COMPARISONS = {
    "views": {
        "judgment view (articles_judgment.npz)": (20, "judgment"),
        "facts view (articles.npz)": (20, "facts"),
    },
    "stackers": {"per-article stackers (shipped)": (20, "facts"), "shared stacker only": (10**9, "facts")},
}


def train(
    cases: list[CriminalCase], statutes: StatuteIndex, design: tuple[int, str], seed: int
) -> ArticleHead:
    min_stack, view = design
    head = ArticleHead(
        charge_articles=charge_articles(cases), statutes=statutes, min_stack=min_stack, reads=view
    )
    return head.fit([c.text(view) for c in cases], [c.articles for c in cases], seed=seed)


def counts(pred: list[set[int]], cases: list[CriminalCase]) -> np.ndarray:
    """[N, 3] per case: right predictions, predictions, gold articles (micro-F1 is a ratio of sums)."""
    gold = [set(c.articles) for c in cases]
    return np.array([[len(p & g), len(p), len(g)] for p, g in zip(pred, gold, strict=True)])


def predicted(head: ArticleHead, cases: list[CriminalCase]) -> list[set[int]]:
    return [set(p) for p in head.predict([c.text(head.reads) for c in cases])]


def micro(rows: np.ndarray) -> float:
    return float(2 * rows[:, 0].sum() / max(1, rows[:, 1].sum() + rows[:, 2].sum()))


def paired_interval(a: np.ndarray, b: np.ndarray, resamples: int = 2000) -> tuple[float, float]:
    """95% interval of micro-F1(a) − micro-F1(b) over cases resampled with replacement."""
    rng = np.random.default_rng(0)
    diffs = [micro(a[i]) - micro(b[i]) for i in rng.integers(0, len(a), size=(resamples, len(a)))]
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return float(lo), float(hi)


def report_pair(label: str, rows: dict[str, np.ndarray], preds: dict, gold: list) -> dict:
    (name_a, a), (name_b, b) = rows.items()
    lo, hi = paired_interval(a, b)
    out = {"cases": len(a), "difference": micro(a) - micro(b), "interval": [lo, hi]}
    for name in rows:
        out[name] = multilabel_f1(preds[name], gold)
        print(
            f"  {label:<28} {name:<32} micro {out[name]['micro_f1']:.3f}  macro {out[name]['macro_f1']:.3f}"
        )
    print(f"  {label:<28} difference {out['difference']:+.3f}  95% [{lo:+.3f}, {hi:+.3f}]  ({len(a)} cases)")
    return out


def held_apart(cases, statutes, designs: dict, seeds: list[int]) -> dict:
    train_cases = [c for c in cases["all"] if not is_held_apart(c.case_id)]
    result = {}
    for seed in seeds:
        heads = {name: train(train_cases, statutes, d, seed) for name, d in designs.items()}
        for file in FILES[:2]:
            test = [c for c in cases[file] if is_held_apart(c.case_id)]
            preds = {n: predicted(h, test) for n, h in heads.items()}
            rows = {n: counts(p, test) for n, p in preds.items()}
            result[f"{file} seed {seed}"] = report_pair(
                f"{file} seed {seed}", rows, preds, [c.articles for c in test]
            )
    return result


def cross_validated(cases, statutes, designs: dict, folds: int) -> dict:
    train_cases = [c for c in cases["all"] if not is_held_apart(c.case_id)]
    rows = {name: [] for name in designs}
    preds = {name: [] for name in designs}
    gold = []
    for tr, te in KFold(folds, shuffle=True, random_state=0).split(train_cases):
        fit_on, test = [train_cases[i] for i in tr], [train_cases[i] for i in te]
        gold += [c.articles for c in test]
        for name, d in designs.items():
            pred = predicted(train(fit_on, statutes, d, seed=0), test)
            rows[name].append(counts(pred, test))
            preds[name] += pred
    stacked = {n: np.concatenate(r) for n, r in rows.items()}
    return report_pair(f"training cases, {folds}-fold", stacked, preds, gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", choices=sorted(COMPARISONS), default="views")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args()
    cases = {f: load_criminal(JUDGMENTS / f) for f in FILES}
    cases["all"] = [c for f in FILES for c in cases[f]]
    statutes = StatuteIndex.read(JUDGMENTS / "criminal_law_articles.jsonl")
    print("held-apart cases (heads trained on every file's other cases)")
    designs = COMPARISONS[args.compare]
    result = {"held_apart": held_apart(cases, statutes, designs, args.seeds)}
    print("cross-validated on the training cases (where the design was chosen)")
    result["cross_validated"] = cross_validated(cases, statutes, designs, args.folds)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
