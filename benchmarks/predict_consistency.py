"""Verdict–facts consistency on the shared judgments: false-positive rate on the real documents and the
detection rate on perturbed copies (a name, an amount or a charge swapped in from another case).

    .venv/bin/python benchmarks/predict_consistency.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pipeline
from pipeline.analysis.perturb import measure
from pipeline.config import ParseConfig
from pipeline.parsing import iter_documents

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main() -> None:
    corpora = {
        "zh judge_criminal (fd)": list(iter_documents(DATA / "zh/judgments/judge_criminal.jsonl.gz",
                                                      ParseConfig(jsonl_text_field="fd"), [])),
        "zh clcr_cases": list(iter_documents(DATA / "zh/judgments/clcr_cases.jsonl.gz", ParseConfig(), [])),
        "en uk_ewca_2020 (LegalDocML)": [pipeline.parse(p) for p in
                                         sorted((DATA / "en/judgments/uk_ewca_2020_xml").glob("*.xml.gz"))],
    }
    for name, docs in corpora.items():
        print(name, json.dumps(measure(docs, seed=0), ensure_ascii=False))


if __name__ == "__main__":
    main()
