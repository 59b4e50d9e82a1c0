"""The key head's pair kinds for case search (retrieval/key_pairs.py) on real CLCR and judge_criminal
cases: each kind pairs what it says it pairs, within one split, from case texts only, and never from a
record an evaluation holds apart."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import replace

import pytest

from retrieval.eval.qa import held_apart
from retrieval.eval.search import split_passages
from retrieval.key_pairs import (
    CLCR,
    FACTS,
    JUDGE,
    REASONING,
    build_pairs,
    cause_tail,
    lines,
    title_causes,
)
from retrieval.predict.train import is_held_apart
from retrieval.train_keys import KeyTrainConfig, hard_negatives

NEW_KINDS = {"clcr_far", "clcr_facts", "judge_far", "judge_facts", "charge"}


@pytest.fixture(scope="module")
def case_cfg(shared_data):
    return KeyTrainConfig(
        data=str(shared_data),
        sources=("clcr", "judge"),
        max_train_docs=40,
        far_pairs=True,
        facts_pairs=True,
        charge_pairs=2,
    )


@pytest.fixture(scope="module")
def built(case_cfg):
    return build_pairs(case_cfg)


def _group_of(b, ref) -> int:
    return b.passage_group[ref[1]]


def test_titles_give_the_cause_of_action_not_a_party():
    titles = [
        "徐有辉与江苏牧羊集团有限公司返还原物纠纷二审民事判决书",
        "王某与李某返还原物纠纷一审民事判决书",
        "张三、李四返还原物纠纷再审民事判决书",
        "罗来杰、程进宇房屋买卖合同纠纷二审民事判决书",
        "赵某与钱某房屋买卖合同纠纷一审民事判决书",
        "孙某与周某房屋买卖合同纠纷二审民事判决书",
        "田地久故意伤害罪一案一审刑事判决书",
        "吴某故意伤害罪一审刑事判决书",
        "被告人郑某故意伤害罪二审刑事裁定书",
        "张新红、张永强二审民事裁定书",
    ]
    assert cause_tail(titles[0]) == "返还原物纠纷"
    assert title_causes(titles) == ["返还原物纠纷"] * 3 + ["房屋买卖合同纠纷"] * 3 + ["故意伤害罪"] * 3 + [""]
    # a cause two titles share is not yet one at min_cases=3; a shorter shared ending is no cause either
    assert title_causes(titles[:2] + titles[3:5]) == ["", "", "", ""]


def test_default_config_builds_only_the_shipped_kinds(shared_data):
    b = build_pairs(KeyTrainConfig(data=str(shared_data), sources=("clcr",), max_train_docs=20))
    assert {r[4] for r in b.rows} == {"clcr_next", "clcr_title", "clcr_reasoning"}
    assert all(r[5] == -1 for r in b.rows) and len(b.docs) == b.n_groups


def test_far_and_facts_pairs_join_a_cases_facts_and_its_reasoning(built):
    b = built
    kinds = {r[4] for r in b.rows}
    assert NEW_KINDS <= kinds
    for a, bb, group, val, src, _ in b.rows:
        if src.endswith("_far"):
            assert a[0] == bb[0] == "p" and _group_of(b, a) == _group_of(b, bb) == group
            assert FACTS.search(b.text(a)) and REASONING in b.text(bb) and a != bb
        if src.endswith("_facts"):
            assert a[0] == "q" and bb[0] == "p" and _group_of(b, bb) == group
            assert REASONING in b.text(bb) and len(b.text(a)) <= 160
        assert b.passage_val[bb[1]] == val if bb[0] == "p" else True


def test_charge_pairs_join_cases_of_one_cause_and_one_split(built):
    b = built
    charge = [r for r in built.rows if r[4] == "charge"]
    assert charge and any(r[3] for r in charge) and any(not r[3] for r in charge)
    for a, bb, group, val, _, cause in charge:
        other = _group_of(b, bb)
        assert a[0] == "q" and other != group and REASONING in b.text(bb)
        assert cause >= 0 and b.group_cause[other] == cause == b.group_cause[group]
        assert b.passage_val[bb[1]] == val
    facts_of = {r[2]: r[0] for r in b.rows if r[4].endswith("_facts")}
    assert all(facts_of[r[2]] == r[0] for r in charge)  # a case's facts are one query for all its pairs
    names = list(b.causes)
    assert all(re.search(r"(纠纷|罪)$", name) for name in names)


def test_hard_negatives_come_from_another_case_of_another_cause(built):
    negatives = hard_negatives(built, list(range(len(built.rows))))
    assert negatives
    for r, j in negatives.items():
        _, _, group, val, _, cause = built.rows[r]
        assert built.passage_group[j] != group and built.passage_val[j] == val
        if cause >= 0:
            assert built.group_cause.get(built.passage_group[j]) != cause


def test_held_apart_judge_cases_are_never_read(built, shared_data):
    texts = set(built.passages)
    seen = 0
    for i, row in enumerate(lines(shared_data / JUDGE)):
        if not is_held_apart(str(row.get("text_id", i))):
            continue
        seen += 1
        first = re.sub(r"\s+", "\n", row["fd"]).strip()[:60]
        assert not any(t.startswith(first) for t in texts)
        assert row["text"].strip()[:160] not in built.queries
    assert seen > 0


def test_qa_and_cuad_held_apart_records_are_never_read(shared_data):
    b = build_pairs(KeyTrainConfig(data=str(shared_data), sources=("cjrc",), max_train_docs=30))
    data = json.loads((shared_data / "zh/qa/cjrc_dev.json").read_text(encoding="utf-8"))["data"]
    apart = [p["context"] for a in data for p in a["paragraphs"] if held_apart(p["context"])]
    apart_passages = {p.text for c in apart for p in split_passages("c", "", c, 400)}
    assert apart and b.passages and not apart_passages & set(b.passages)
    b = build_pairs(KeyTrainConfig(data=str(shared_data), sources=("cuad",), max_train_docs=5))
    contracts = [
        r for r in lines(shared_data / "en/contracts/cuad_contracts.jsonl.gz") if held_apart(r["doc_id"])
    ]
    apart_passages = {p.text for r in contracts for p in split_passages("c", "", r["text"], 600)}
    assert contracts and b.passages and not apart_passages & set(b.passages)


def test_pairs_read_only_case_texts_not_the_query_pool_fields(shared_data, case_cfg, tmp_path):
    """Without CLCR's `tasks` and `domains` (which come from its query pools) the pairs are the same."""
    rows = []
    with gzip.open(shared_data / CLCR, "rt", encoding="utf-8") as f:
        for line in f:
            rows.append(json.loads(line))
            if len(rows) == 120:
                break
    for name, keep in (("full", None), ("bare", ("id", "title", "text"))):
        path = tmp_path / name / CLCR
        path.parent.mkdir(parents=True)
        with gzip.open(path, "wt", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({k: r[k] for k in keep} if keep else r, ensure_ascii=False) + "\n")
    full, bare = (
        build_pairs(replace(case_cfg, data=str(tmp_path / n), sources=("clcr",))) for n in ("full", "bare")
    )
    assert full.rows == bare.rows and full.queries == bare.queries and full.passages == bare.passages
    assert any(r[4] == "charge" for r in full.rows)
