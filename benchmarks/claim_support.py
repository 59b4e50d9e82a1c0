"""Support-passage recall of the claim-support task (retrieval/predict/support.py) on a small hand-checked
set: for each element of an independent claim of a few shared USPTO grants, the description passages
that support it (benchmarks/data/claim_support.json; how they were made: benchmarks/data/README.md).

recall@k = the share of labelled passages found among the element's k best segments (a labelled passage
is found when its quoted words lie inside a returned segment), for the hybrid index (BM25 + MiniLM,
reciprocal-rank fused; the default) against BM25 alone.

    .venv/bin/python benchmarks/claim_support.py [--k 1 3 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import pipeline
from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument
from pipeline.parsing import build
from pipeline.parsing.layouts import grant_text
from pipeline.parsing.text import from_text
from pipeline.paths import SHARED_DATA
from retrieval.predict.support import SupportIndex, claim_elements, independent_claims

GRANTS = SHARED_DATA / "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"
LABELS = Path(__file__).with_name("data") / "claim_support.json"


def grants(lines: set[int]) -> dict[int, pipeline.Document]:
    """The grants on these 0-based lines of the PatentsView file, parsed as the claim-tree test does."""
    out = {}
    with gzip.open(GRANTS, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            if n in lines:
                record = json.loads(line)
                source = f"{GRANTS.name}:{n + 1}"
                out[n] = build(
                    from_text(grant_text(record), source, record["title"]),
                    source,
                    f"grant-{n}",
                    ParseConfig(kind="patent"),
                )
    return out


def labelled_elements(labels: dict) -> list[tuple[pipeline.Document, list, str, list[str]]]:
    """(document, its segments, element words, quoted supporting passages) of every labelled element."""
    docs = grants({p["line"] for p in labels["patents"]})
    out = []
    for p in labels["patents"]:
        doc = docs[p["line"]]
        segs = pipeline.segment(doc)
        claim = dict(independent_claims(doc)).get(p["claim"])
        if claim is None:
            raise CorruptDocument(
                str(LABELS), f"grant line {p['line']} has no independent claim {p['claim']}"
            )
        elements = [claim.text[s:e] for s, e in claim_elements(claim.text)]
        for e in p["elements"]:
            words = next((w for w in elements if w.startswith(e["element"])), None)
            if words is None:
                raise CorruptDocument(str(LABELS), f"grant line {p['line']}: no element {e['element']!r}")
            out.append((doc, segs, words, e["support"]))
    return out


def recall(elements, dense: bool, ks: list[int]) -> dict[str, float]:
    found = {k: 0 for k in ks}
    total = 0
    indexes: dict[str, SupportIndex] = {}
    for doc, segs, words, support in elements:
        if doc.doc_id not in indexes:
            indexes[doc.doc_id] = SupportIndex(doc, segs, dense)
        ranked = [seg.text for seg, _ in indexes[doc.doc_id].support(words, max(ks))]
        total += len(support)
        for k in ks:
            found[k] += sum(any(q in text for text in ranked[:k]) for q in support)
    return {f"recall@{k}": found[k] / max(1, total) for k in ks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[1, 3, 5])
    args = ap.parse_args()
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    elements = labelled_elements(labels)
    passages = sum(len(s) for *_, s in elements)
    print(f"{len(labels['patents'])} grants, {len(elements)} claim elements, {passages} labelled passages")
    for name, dense in (("bm25 only (baseline)", False), ("hybrid bm25 + minilm", True)):
        print(name, json.dumps({k: round(v, 3) for k, v in recall(elements, dense, args.k).items()}))


if __name__ == "__main__":
    main()
