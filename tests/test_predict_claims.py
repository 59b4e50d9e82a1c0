"""The patent claim tree of the predict stage against the USPTO grants' own claim markup (`depends_on`
of us_patents_parsed.jsonl.gz): the parents each claim row names, and evidence that quotes the words."""

from __future__ import annotations

import gzip
import json

from predict_tasks import only

import pipeline
from pipeline.config import ParseConfig
from pipeline.parsing import build
from pipeline.parsing.layouts import grant_text
from pipeline.parsing.text import from_text
from pipeline.records import DocKind
from retrieval.predict.stage import predict_stage

GRANTS = "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"


def _grants(shared_data):
    """(parsed document, claim number -> the claims its markup says it depends on) per grant with claims."""
    with gzip.open(shared_data / GRANTS, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            record = json.loads(line)
            if not record["claims"]:
                continue
            source = f"{GRANTS}:{n + 1}"
            doc = build(
                from_text(grant_text(record), source, record["title"]),
                source,
                f"grant-{n}",
                ParseConfig(kind="patent"),
            )
            yield (
                doc,
                {
                    int(c["num"]): {int(d.rpartition("-")[2]) for d in c["depends_on"]}
                    for c in record["claims"]
                },
            )


def test_claim_tree_agrees_with_the_uspto_markup(shared_data):
    claims = right = dependent = dependent_right = docs = 0
    wrong: list[str] = []
    for doc, gold in _grants(shared_data):
        rows = [p for p in predict_stage([doc], [], only("claim_tree")) if p.task == "claim_tree"]
        docs += 1
        for p in rows:
            assert p.value == ("dependent" if len(p.values) > 1 else "independent")
            for e in p.evidence:
                assert doc.text[e.char_start : e.char_end] == e.text
            if len(p.values) > 1:
                assert all("claim" in e.text.lower() for e in p.evidence)
        found = {int(p.values[0]): {int(v) for v in p.values[1:]} for p in rows}
        for number, parents in gold.items():
            claims += 1
            ok = found.get(number) == parents
            right += ok
            dependent += bool(parents)
            dependent_right += ok and bool(parents)
            if not ok and len(wrong) < 5:
                wrong.append(
                    f"{doc.doc_id} claim {number}: {sorted(found.get(number, {-1}))} != {sorted(parents)}"
                )
    print(
        f"\nclaim tree over {docs} USPTO grants: {right}/{claims} claims with the right parents = "
        f"{right / claims:.2%}; dependent claims {dependent_right}/{dependent} = {dependent_right / dependent:.2%}"
    )
    print("\n".join(wrong))
    assert docs > 400
    assert right / claims >= 0.95 and dependent_right / dependent >= 0.95


def test_no_role_rows_on_patents_and_no_claim_tree_when_off(shared_data):
    doc, _ = next(_grants(shared_data))
    assert doc.kind == DocKind.PATENT
    segs = pipeline.segment(doc)
    rows = predict_stage([doc], segs, only("roles"))
    assert not [p for p in rows if p.task.startswith(("block_role", "claim_tree"))]
