"""The pairs the key head trains on (retrieval/train_keys.py), built from the data itself before encoding.

Kinds, each a `source` name in the validation report (a should find b):
- clcr_next / judge_next: neighbouring passages of a case, both as the index reads them;
- clcr_title: a CLCR case's title (alone) and its second passage;
- clcr_reasoning: a sentence of its 本院认为 (alone) and its first passage;
- cjrc: a CJRC question (alone) and the passage of its context holding the answer;
- cuad: a CUAD clause category (alone) and the passage of the contract holding the answer;
and, switched on in `KeyTrainConfig`, the kinds closer to what a case search is asked (a situation, to
be answered by cases decided alike):
- *_far (`far_pairs`): a case's facts passage and its reasoning passage (本院认为), far apart in it;
- *_facts (`facts_pairs`): the case's facts (alone, as a user describes a situation) and its reasoning
  passage;
- charge (`charge_pairs`): one case's facts (alone) and the reasoning passage of another case of the
  same split with the same charge or cause of action, as the documents themselves name it: a CLCR
  title (…故意伤害罪一审刑事判决书, …房屋买卖合同纠纷二审民事判决书), a judge_criminal verdict
  (被告人…犯盗窃罪).
Only case texts are read: never CLCR's queries, relevance labels or its `tasks`/`domains` fields (they
come from the query pools), never the QA and CUAD evaluations' held-apart contexts and contracts
(`retrieval.eval.qa.held_apart`), never the article evaluation's held-apart judge_criminal cases
(`retrieval.predict.train.is_held_apart`).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipeline.analysis.consistency import CHARGE
from pipeline.tokenizer import is_held_out
from retrieval.eval.qa import held_apart
from retrieval.eval.search import split_passages
from retrieval.predict.train import is_held_apart

if TYPE_CHECKING:
    from retrieval.train_keys import KeyTrainConfig

CLCR = "zh/judgments/clcr_cases.jsonl.gz"
CJRC = "zh/qa/cjrc_dev.json"
CUAD = "en/contracts/cuad_contracts.jsonl.gz"
CUAD_QA = "en/contracts/cuad_qa.jsonl.gz"
JUDGE = "zh/judgments/judge_criminal.jsonl.gz"

# where a judgment starts telling what happened: the court's findings, the prosecution's charge (指控
# followed by its account, not 起诉书指控被告人… of the procedural paragraph), a party's claim
FACTS = re.compile(
    r"经审理查明|本院查明|审理查明|经审理认定|指控[：:，,]|诉称|诉讼请求[：:]|上诉请求|申请再审称"
)
REASONING = "本院认为"
# a title's parties end at one of these (the greedy .* cuts through the last), its cause follows
_PARTIES = re.compile(r".*(?:与|、|诉|等|及|某|公司|银行|医院|委员会|合作社|事务所|检察院|政府|：|:)")
_CAUSE_END = re.compile(r"纠纷|罪")


class PairBuilder:
    """Texts to encode and the pairs between them, before encoding: refs are ("q", i) for a query
    encoded alone, ("p", j) for passage j of the documents encoded in order. A group is one case or
    context (its passages may be encoded as several documents); `group_cause` the cause id of a group
    that named one."""

    def __init__(self):
        self.queries: list[str] = []
        self.docs: list[list[str]] = []
        self.passages: list[str] = []
        self.passage_group: list[int] = []
        self.passage_val: list[bool] = []
        self.n_groups = 0
        self.group_cause: dict[int, int] = {}
        self.causes: dict[str, int] = {}  # cause -> id, in order of first use
        # (a, b, group, val, source, cause id of a's case or -1)
        self.rows: list[tuple[tuple[str, int], tuple[str, int], int, bool, str, int]] = []

    def doc(
        self, passages: list[str], val: bool, group: int | None = None
    ) -> tuple[int, list[tuple[str, int]]]:
        """Passages encoded in order with memory, as one document; a new group unless `group` is given."""
        if group is None:
            group, self.n_groups = self.n_groups, self.n_groups + 1
        first = len(self.passages)
        self.docs.append(passages)
        self.passages.extend(passages)
        self.passage_group.extend([group] * len(passages))
        self.passage_val.extend([val] * len(passages))
        return group, [("p", first + i) for i in range(len(passages))]

    def query(self, text: str) -> tuple[str, int]:
        self.queries.append(text)
        return ("q", len(self.queries) - 1)

    def pair(self, a, b, group: int, val: bool, source: str) -> None:
        self.rows.append((a, b, group, val, source, self.group_cause.get(group, -1)))

    def name_cause(self, group: int, cause: str) -> None:
        if cause:
            self.group_cause[group] = self.causes.setdefault(cause, len(self.causes))

    def cause_of(self, group: int) -> str:
        return list(self.causes)[self.group_cause[group]] if group in self.group_cause else ""

    def text(self, ref: tuple[str, int]) -> str:
        return self.queries[ref[1]] if ref[0] == "q" else self.passages[ref[1]]


@dataclass
class CaseParts:
    """What the charge pairs need of a case: its facts (a query, encoded once for all its pairs; None
    without one) and its reasoning passage."""

    group: int
    val: bool
    cause: str
    facts: tuple[str, int] | None
    reasoning: tuple[str, int]


def lines(path: Path):
    with (
        gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")
    ) as f:
        yield from (json.loads(line) for line in f if line.strip())


def _kept(n_train: list[int], val: bool, cfg: KeyTrainConfig) -> bool:
    """Validation records always; training records up to the cap (counted in n_train[0])."""
    if val:
        return True
    if cfg.max_train_docs is not None and n_train[0] >= cfg.max_train_docs:
        return False
    n_train[0] += 1
    return True


def cause_tail(title: str) -> str:
    """A title up to its last 纠纷/罪, with the parties before the cause cut off ("" without either)."""
    ends = list(_CAUSE_END.finditer(title))
    if not ends:
        return ""
    return _PARTIES.sub("", title[: ends[-1].end()], count=1)


def _endings(tail: str) -> list[str]:
    """The endings of a cause tail that could name a cause, longest first: a charge has 3+ characters
    (盗窃罪), a cause of action 4+ (离婚纠纷; 资纠纷 would join 出资 and 增资)."""
    shortest = 3 if tail.endswith("罪") else 4
    return [tail[i:] for i in range(len(tail) - shortest + 1)]


def title_causes(titles: list[str], min_cases: int = 3) -> list[str]:
    """Each title's cause: the longest ending of its `cause_tail` that at least `min_cases` titles
    share: a cause of action recurs across cases, a party's name does not."""
    tails = [cause_tail(t) for t in titles]
    counts = Counter(s for t in tails for s in set(_endings(t)))
    return [next((s for s in _endings(t) if counts[s] >= min_cases), "") for t in tails]


def verdict_charges(full: str) -> str:
    """The charges a criminal judgment convicts of (after 判决如下), sorted and joined; "" if none."""
    return "、".join(sorted({m.group(1) for m in CHARGE.finditer(full.partition("判决如下")[2])}))


def _passage_ref(b: PairBuilder, group: int, texts: list[str], refs: list, j: int, val: bool):
    """Passage j of a case as the index reads it: from the encoded prefix, else encoded right after its
    predecessor (the memory it would carry there), as another document of the case's group."""
    if j < len(refs):
        return refs[j]
    return b.doc(texts[j - 1 : j + 1], val, group)[1][-1]


def add_case_parts(
    b: PairBuilder, case: tuple[int, bool, str], refs: list, texts: list[str], facts: str, cfg
) -> CaseParts | None:
    """The far and facts pairs of one case (group, val, source name) as switched on, and its parts for
    the charge pairs; None when it has no reasoning passage after a facts passage."""
    group, val, src = case
    r = next((j for j, t in enumerate(texts) if REASONING in t), -1)
    if r < 2:
        return None
    f = next((j for j, t in enumerate(texts[:r]) if j > 0 and FACTS.search(t)), -1)
    if f < 1:
        return None
    reasoning = _passage_ref(b, group, texts, refs, r, val)
    if cfg.far_pairs:
        b.pair(_passage_ref(b, group, texts, refs, f, val), reasoning, group, val, f"{src}_far")
    query = b.query(facts) if facts and (cfg.facts_pairs or cfg.charge_pairs) else None
    if cfg.facts_pairs and query:
        b.pair(query, reasoning, group, val, f"{src}_facts")
    return CaseParts(group, val, b.cause_of(group), query, reasoning)


def facts_query(text: str, chars: int) -> str:
    """The facts of a judgment as a query: from its first facts marker, `chars` characters at most."""
    m = FACTS.search(text)
    return text[m.start() : m.start() + chars].strip() if m else ""


def _wants_parts(cfg) -> bool:
    return bool(cfg.far_pairs or cfg.facts_pairs or cfg.charge_pairs)


def add_clcr(b: PairBuilder, cfg: KeyTrainConfig) -> list[CaseParts]:
    n_train, parts = [0], []
    cases = list(lines(Path(cfg.data) / CLCR))
    causes = title_causes([c.get("title") or "" for c in cases], cfg.cause_min_cases)
    for i, case in enumerate(cases):
        val = is_held_out(CLCR, i, cfg.seed, cfg.holdout)
        ps = split_passages(str(case["id"]), case.get("title") or "", case["text"], cfg.passage_chars)
        if len(ps) < 2 or not _kept(n_train, val, cfg):
            continue
        texts = [p.text for p in ps]
        group, refs = b.doc(texts[: cfg.case_passages], val)
        if cfg.charge_pairs:  # a criminal title without its charge: the verdict's
            b.name_cause(group, causes[i] or verdict_charges(case["text"]))
        for x, y in zip(refs, refs[1:], strict=False):
            b.pair(x, y, group, val, "clcr_next")
        if case.get("title"):
            b.pair(b.query(case["title"]), refs[1], group, val, "clcr_title")
        reasoning = next((line for line in case["text"].splitlines() if REASONING in line), "")
        if reasoning:
            b.pair(b.query(reasoning.strip()[:160]), refs[0], group, val, "clcr_reasoning")
        if _wants_parts(cfg):
            facts = facts_query(case["text"], cfg.query_chars)
            parts.append(add_case_parts(b, (group, val, "clcr"), refs, texts, facts, cfg))
    return [p for p in parts if p is not None]


def add_judge(b: PairBuilder, cfg: KeyTrainConfig) -> list[CaseParts]:
    """judge_criminal: full judgments (`fd`) read as the index reads a case; the prosecution's facts
    (`text`) as the facts query; the convicted charges as the cause."""
    n_train, parts = [0], []
    for i, row in enumerate(lines(Path(cfg.data) / JUDGE)):
        val = is_held_out(JUDGE, i, cfg.seed, cfg.holdout)
        if is_held_apart(str(row.get("text_id", i))):
            continue
        # fd keeps a judgment's paragraphs apart by spaces: as lines, it splits as a CLCR case does
        full = re.sub(r"\s+", "\n", row.get("fd") or "").strip()
        texts = [p.text for p in split_passages(f"judge{i}", "", full, cfg.passage_chars)]
        if len(texts) < 2 or not _kept(n_train, val, cfg):
            continue
        group, refs = b.doc(texts[: cfg.case_passages], val)
        if cfg.charge_pairs:
            b.name_cause(group, verdict_charges(full))
        for x, y in zip(refs, refs[1:], strict=False):
            b.pair(x, y, group, val, "judge_next")
        if _wants_parts(cfg):
            facts = (row.get("text") or "").strip()[: cfg.query_chars]
            parts.append(add_case_parts(b, (group, val, "judge"), refs, texts, facts, cfg))
    return [p for p in parts if p is not None]


def add_charge_pairs(b: PairBuilder, parts: list[CaseParts], per_case: int, seed: int) -> None:
    """Up to `per_case` pairs per case: its facts (alone) and the reasoning passage of another case of
    its split with the same cause, the partners drawn at random (seeded)."""
    rng = np.random.default_rng(seed)
    alike: dict[tuple[bool, str], list[CaseParts]] = defaultdict(list)
    parts = [p for p in parts if p.cause and p.facts]
    for p in parts:
        alike[p.val, p.cause].append(p)
    for p in parts:
        others = [o for o in alike.get((p.val, p.cause), []) if o.group != p.group]
        for k in rng.permutation(len(others))[:per_case]:
            b.pair(p.facts, others[k].reasoning, p.group, p.val, "charge")


def add_cjrc(b: PairBuilder, cfg: KeyTrainConfig) -> list[CaseParts]:
    n_train, index = [0], 0
    data = json.loads((Path(cfg.data) / CJRC).read_text(encoding="utf-8"))["data"]
    for article in data:
        for par in article["paragraphs"]:
            context, index = par["context"], index + 1
            val = is_held_out(CJRC, index - 1, cfg.seed, cfg.holdout)
            if held_apart(context):
                continue
            ps = [p.text for p in split_passages(f"cjrc{index}", "", context, cfg.passage_chars)]
            qas = [q for q in par["qas"] if q.get("is_impossible") not in (True, "true") and q["answers"]]
            hits = [
                (q["question"], next((j for j, p in enumerate(ps) if q["answers"][0]["text"] in p), -1))
                for q in qas
            ]
            hits = [(q, j) for q, j in hits if j >= 0][: cfg.questions_per_context]
            if not ps or not hits or not _kept(n_train, val, cfg):
                continue
            group, refs = b.doc(ps, val)
            for question, j in hits:
                b.pair(b.query(question), refs[j], group, val, "cjrc")
    return []


def add_cuad(b: PairBuilder, cfg: KeyTrainConfig) -> list[CaseParts]:
    questions = defaultdict(list)
    for q in lines(Path(cfg.data) / CUAD_QA):
        if not q["is_impossible"] and q["answers"]:
            questions[q["doc_id"]].append(q)
    n_train = [0]
    for i, row in enumerate(lines(Path(cfg.data) / CUAD)):
        val = is_held_out(CUAD, i, cfg.seed, cfg.holdout)
        if held_apart(row["doc_id"]) or not questions[row["doc_id"]]:
            continue
        ps = [p.text for p in split_passages(row["doc_id"], "", row["text"], 600)][: cfg.contract_passages]
        hits = [
            (q["category"], next((j for j, p in enumerate(ps) if q["answers"][0]["text"] in p), -1))
            for q in questions[row["doc_id"]]
        ]
        hits = [(c, j) for c, j in hits if j >= 0]
        if not hits or not _kept(n_train, val, cfg):
            continue
        group, refs = b.doc(ps, val)
        for category, j in hits:
            b.pair(b.query(category), refs[j], group, val, "cuad")
    return []


ADDERS = {"clcr": add_clcr, "cjrc": add_cjrc, "cuad": add_cuad, "judge": add_judge}


def build_pairs(cfg: KeyTrainConfig) -> PairBuilder:
    """Every pair of the configured sources, the charge pairs across them last."""
    b, parts = PairBuilder(), []
    for name in cfg.sources:
        if name not in ADDERS:
            raise ValueError(f"key-training source must be one of {tuple(ADDERS)}, not {name!r}")
        parts += ADDERS[name](b, cfg)
    if cfg.charge_pairs:
        add_charge_pairs(b, parts, cfg.charge_pairs, cfg.seed)
    return b
