"""Provisos over real statute and contract text: found with the clause they restrict, spans in place."""

from __future__ import annotations

import gzip
import itertools
import json
import re

from pipeline.analysis.provisos import find_provisos


def _articles(shared_data) -> list[str]:
    with open(shared_data / "zh/judgments/criminal_law_articles.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def test_every_zh_dan_chuwai_proviso_found(shared_data):
    texts = _articles(shared_data)
    # sentences of the criminal law with 但(是)… 除外 / 不在此限 inside them
    expected = sum(len(re.findall(r"[^。]*?但(?!凡|书)[^。；]*?(?:除外|不在此限)", t)) for t in texts)
    found = [(t, p) for t in texts for p in find_provisos(t, "zh") if p.marker.startswith("但")]
    assert expected >= 5 and len(found) == expected
    for text, p in found:
        assert p.restricted[1] <= p.proviso[0], "the restricted clause comes before 但"
        assert text[p.proviso[0] : p.proviso[1]].startswith("但")
        assert text[p.proviso[0] : p.proviso[1]].endswith(("除外", "不在此限"))
        assert text[p.restricted[0] : p.restricted[1]].strip()


def test_leading_chu_wai_restricts_what_follows(shared_data):
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        texts = [json.loads(line)["fd"] for line in f]
    text = next(t for t in texts if re.search(r"(?:^|[。；\s])除[^。，]{1,40}外，", t))
    (p,) = [p for p in find_provisos(text, "zh") if p.marker == "除…外"]
    assert p.proviso[1] <= p.restricted[0]
    assert text[p.proviso[0]] == "除" and text[p.proviso[1] - 1] == "外"


def test_plain_but_and_danfan_are_not_provisos():
    # written for this test: a contrast and 但凡 with no exception carved out
    assert find_provisos("被告人认罪，但是拒不退赃。", "zh") == []
    assert find_provisos("但凡涉及本案的证据均已提交，但书条款除外。", "zh") == []


def test_contract_provisos(shared_data):
    with gzip.open(shared_data / "en/contracts/cuad_contracts.jsonl.gz", "rt", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in itertools.islice(f, 15)]
    markers = set()
    n_provided = 0
    for t in texts:
        for p in find_provisos(t, "en"):
            markers.add(p.marker)
            proviso = t[p.proviso[0] : p.proviso[1]]
            restricted = t[p.restricted[0] : p.restricted[1]]
            assert proviso and restricted.strip()
            assert p.restricted[1] <= p.proviso[0] or p.proviso[1] <= p.restricted[0]
            if p.marker == "provided that":
                n_provided += 1
                assert proviso.lower().startswith("provided")
    total = sum(len(re.findall(r"\bprovided,?\s+(?:however,?\s+)?that\b", t, re.I)) for t in texts)
    assert n_provided >= 0.8 * total and total >= 10
    assert {"unless", "provided that"} <= markers
