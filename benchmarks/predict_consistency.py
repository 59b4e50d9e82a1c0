"""Verdict–facts consistency on every shared judgment corpus: the share of real judgments flagged as
written, the share of perturbed copies caught (a name, a charge, an amount or a custodial term swapped
in from another case of the same corpus, and on judge_criminal a special-part article the OPINION
applies swapped for another case's), and every flag on a real judgment, for a reviewer to read.

The article checks need predicted articles: on judge_criminal each half of the cases is checked with an
ArticleHead reading the judgment view, as the run reads a judgment (the facts, then the court's reasoning
and sentence with every article reference cut), and a charge → article table, both trained on the other
half only, so no judgment is checked by a head that saw it. The other corpora run the rule checks alone.

    .venv/bin/python benchmarks/predict_consistency.py --limit 40          # at most 40 per corpus
    .venv/bin/python benchmarks/predict_consistency.py --limit 40 --no-articles

Goals (issue 20): >= 90% of perturbed copies caught, <= 5% of real judgments flagged.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import pipeline
from pipeline.analysis.consistency import check_document
from pipeline.analysis.perturb import measure
from pipeline.config import ParseConfig
from pipeline.errors import DocumentError
from pipeline.parsing import iter_documents
from pipeline.paths import SHARED_DATA
from retrieval.predict.config import PredictConfig
from retrieval.predict.criminal import charge_articles, load_criminal
from retrieval.predict.facts import article_scores
from retrieval.predict.heads import ArticleHead

ZH = SHARED_DATA / "zh"
CRIMINAL = ZH / "judgments/judge_criminal.jsonl.gz"
ARTICLE_THRESHOLD = PredictConfig().article_consistency_threshold


def corpora(limit: int | None) -> dict[str, list]:
    """Every shared corpus of judgments, parsed (at most `limit` documents with a verdict each)."""

    def first(docs) -> list:
        return list(itertools.islice((d for d in docs if d.blocks), limit))

    def files(pattern: str) -> list:
        out = []
        for p in sorted(ZH.glob(pattern)):
            try:
                out.append(pipeline.parse(p))
            except DocumentError as e:
                print(f"skipped {e}")
        return out

    return {
        "zh judge_criminal (fd)": first(iter_documents(CRIMINAL, ParseConfig(jsonl_text_field="fd"), [])),
        "zh clcr_cases": first(iter_documents(ZH / "judgments/clcr_cases.jsonl.gz", ParseConfig(), [])),
        "zh wenshu_mixed": first(iter_documents(ZH / "judgments/wenshu_mixed.jsonl", ParseConfig(), [])),
        "zh pdf + doc": files("pdf/*.pdf") + files("doc/*.doc"),
        "en uk_ewca_2020 (LegalDocML)": [
            pipeline.parse(p)
            for p in sorted((SHARED_DATA / "en/judgments/uk_ewca_2020_xml").glob("*.xml.gz"))[:limit]
        ],
    }


def cross_fitted(docs: list, seed: int = 0) -> dict:
    """measure() with the article checks, two folds by record parity, pooled (judge_criminal only)."""
    cases = load_criminal(CRIMINAL, len(docs))
    parts = []
    for fold in (0, 1):
        train = [c for i, c in enumerate(cases) if i % 2 != fold]
        head = ArticleHead(reads="judgment").fit(
            [c.text("judgment") for c in train], [c.articles for c in train], seed=seed
        )
        table = {k: set(v) for k, v in charge_articles(train).items()}
        parts.append(
            measure(
                [d for i, d in enumerate(docs) if i % 2 == fold],
                seed,
                articles=lambda d, h=head: article_scores(d, h),
                charge_articles=table,
                article_threshold=ARTICLE_THRESHOLD,
            )
        )
    return pooled(parts)


def pooled(parts: list[dict]) -> dict:
    """One report of several measure() reports (documents, flagged share, detection per kind)."""
    docs = sum(p["documents"] for p in parts)
    flagged = sum(p["false_positive_rate"] * p["documents"] for p in parts)
    detection: dict[str, dict] = {}
    for p in parts:
        for kind, r in p["detection"].items():
            d = detection.setdefault(kind, {"copies": 0, "caught": 0.0})
            d["copies"] += r["copies"]
            d["caught"] += r["rate"] * r["copies"]
    copies = sum(d["copies"] for d in detection.values())
    return {
        "documents": docs,
        "false_positive_rate": flagged / max(1, docs),
        "caught": sum(d["caught"] for d in detection.values()) / max(1, copies),
        "detection": {
            k: {"copies": v["copies"], "rate": v["caught"] / max(1, v["copies"])}
            for k, v in detection.items()
        },
    }


def flags_as_written(name: str, docs: list) -> list[dict]:
    """Every rule flag on the real judgments, with the words it quotes."""
    out = []
    for d in docs:
        for f in check_document(d):
            quoted = " | ".join(d.text[s:e] for s, e in f.spans)
            out.append(
                {
                    "corpus": name,
                    "doc": d.doc_id,
                    "title": (d.title or "")[:40],
                    "check": f.check,
                    "quoted": quoted,
                    "message": f.message,
                }
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=40, help="at most this many documents per corpus")
    ap.add_argument("--no-articles", action="store_true", help="skip the cross-fitted article checks")
    ap.add_argument("--flags", type=Path, help="write every flag on a real judgment here (JSON lines)")
    args = ap.parse_args()
    parts, flags = [], []
    for name, docs in corpora(args.limit).items():
        report = measure(docs, seed=0)
        parts.append(report)
        flags += flags_as_written(name, docs)
        print(name, json.dumps(report, ensure_ascii=False))
    print("all corpora (rule checks)", json.dumps(pooled(parts), ensure_ascii=False))
    if not args.no_articles:
        criminal = list(
            itertools.islice(iter_documents(CRIMINAL, ParseConfig(jsonl_text_field="fd"), []), args.limit)
        )
        print(
            "zh judge_criminal, with the article checks (cross-fitted heads)",
            json.dumps(cross_fitted(criminal), ensure_ascii=False),
        )
    for f in flags:
        print("flag as written:", json.dumps(f, ensure_ascii=False))
    if args.flags:
        args.flags.write_text(
            "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in flags), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
