"""Verdict–facts consistency on the shared judgments: false-positive rate on the real documents and the
detection rate on perturbed copies (a name, an amount or a charge swapped in from another case, and on
judge_criminal a special-part article the OPINION applies swapped for another case's).

The article checks need predicted articles: on judge_criminal each half of the cases is checked with an
ArticleHead (and charge → article table) trained on the other half only, so no judgment is checked by a
head that saw it. The other corpora run the rule checks alone.

    .venv/bin/python benchmarks/predict_consistency.py
"""

from __future__ import annotations

import json

import pipeline
from pipeline.analysis.perturb import measure
from pipeline.config import ParseConfig
from pipeline.parsing import iter_documents
from pipeline.paths import SHARED_DATA
from retrieval.predict.config import PredictConfig
from retrieval.predict.criminal import charge_articles, load_criminal
from retrieval.predict.heads import ArticleHead
from retrieval.predict.stage import article_scores

CRIMINAL = SHARED_DATA / "zh/judgments/judge_criminal.jsonl.gz"
ARTICLE_THRESHOLD = PredictConfig().article_consistency_threshold


def cross_fitted(docs: list, seed: int = 0) -> dict:
    """measure() with the article checks, two folds by record parity, pooled."""
    cases = load_criminal(CRIMINAL)
    if len(cases) != len(docs):
        raise SystemExit(f"{len(docs)} parsed judgments for {len(cases)} records: cannot pair them")
    pooled = {"documents": 0, "flagged": 0.0, "detection": {}}
    for fold in (0, 1):
        train = [c for i, c in enumerate(cases) if i % 2 != fold]
        head = ArticleHead().fit([c.facts for c in train], [c.articles for c in train], seed=seed)
        table = {k: set(v) for k, v in charge_articles(train).items()}
        part = measure(
            [d for i, d in enumerate(docs) if i % 2 == fold],
            seed,
            articles=lambda d, h=head: article_scores(d, h),
            charge_articles=table,
            article_threshold=ARTICLE_THRESHOLD,
        )
        pooled["documents"] += part["documents"]
        pooled["flagged"] += part["false_positive_rate"] * part["documents"]
        for kind, r in part["detection"].items():
            d = pooled["detection"].setdefault(kind, {"copies": 0, "detected": 0.0})
            d["copies"] += r["copies"]
            d["detected"] += r["rate"] * r["copies"]
    return {
        "documents": pooled["documents"],
        "false_positive_rate": pooled["flagged"] / max(1, pooled["documents"]),
        "detection": {
            k: {"copies": v["copies"], "rate": v["detected"] / max(1, v["copies"])}
            for k, v in pooled["detection"].items()
        },
    }


def main() -> None:
    criminal = list(iter_documents(CRIMINAL, ParseConfig(jsonl_text_field="fd"), []))
    corpora = {
        "zh judge_criminal (fd)": criminal,
        "zh clcr_cases": list(
            iter_documents(SHARED_DATA / "zh/judgments/clcr_cases.jsonl.gz", ParseConfig(), [])
        ),
        "en uk_ewca_2020 (LegalDocML)": [
            pipeline.parse(p)
            for p in sorted((SHARED_DATA / "en/judgments/uk_ewca_2020_xml").glob("*.xml.gz"))
        ],
    }
    for name, docs in corpora.items():
        print(name, json.dumps(measure(docs, seed=0), ensure_ascii=False))
    print(
        "zh judge_criminal (fd), with the article checks (cross-fitted article heads)",
        json.dumps(cross_fitted(criminal), ensure_ascii=False),
    )


if __name__ == "__main__":
    main()
