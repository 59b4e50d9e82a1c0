"""CUAD, contracts held apart: retrieval of answer segments, then the reader over them.

Each contract is cut into passages (lines packed to ≤ `passage_chars`), encoded in order with memory
(as `ldx run` encodes a document), and searched by BM25 within itself. The query is the question's
clause category: CUAD's 41 questions are one template around it ("Highlight the parts (if any) of this
contract related to "Governing Law" that should be reviewed by a lawyer."), so the category is what the
question asks; it is also what the reader reads as the question. The reader reads the top `k`
passages; the answer is its most confident span over them, or no answer when every passage says none.

Metrics, on the contracts whose doc_id falls in eval_qa's held-apart rule:
- segment recall@k: share of answerable questions for which a passage holding a gold answer's text
  (whitespace-normalised) is among the first k retrieved;
- span F1 (SQuAD word F1, best over the gold clauses) per answerable question, overall and per category;
- AUPR as in the CUAD paper: every question's best span over its passages (whatever the answer type
  said) ranked by its confidence P(SPAN)·p(start)·p(end); at each threshold a confident answer that
  matches a gold clause (word Jaccard ≥ 0.5) is a true positive, any other confident answer a false
  positive, and an answerable question without a correct confident answer a false negative; the area
  under that precision-recall curve, and the precision at 80% recall where reached. Span F1 and
  no-answer accuracy use the answer-type decision (an answer only where it says SPAN);
- the same for a trivial baseline read in the same run: the clause of the top passage sharing the
  most query terms, its confidence the number of shared terms.
"""

from __future__ import annotations

import gzip
import json
import re
import string
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.errors import CorruptDocument
from pipeline.records import BlockType, Segment
from retrieval.eval.metrics import overlap_f1
from retrieval.eval.qa import held_apart, overlap_baseline
from retrieval.eval.search import split_passages
from retrieval.hybrid import HybridIndex
from retrieval.inject import encode_document
from retrieval.predict.clauses import contract_sentences
from retrieval.reader.runtime import EncodedText
from retrieval.text import terms

KS = (1, 3, 5, 10)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@dataclass
class CuadQuestion:
    qid: str
    category: str
    golds: list[str]  # empty when the contract has no such clause
    starts: list[int] = field(default_factory=list)  # each gold's offset in the contract's text


@dataclass
class Contract:
    doc_id: str
    text: str
    questions: list[CuadQuestion]


def load_cuad(data_dir: Path, split: str = "heldout", limit: int | None = None) -> list[Contract]:
    """Contracts of the split (`heldout`, `train` or `all`) with their questions, in file order."""
    data_dir = Path(data_dir)
    contracts: dict[str, Contract] = {}
    path = data_dir / "cuad_contracts.jsonl.gz"
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if split == "all" or (split == "heldout") == held_apart(row["doc_id"]):
                    contracts[row["doc_id"]] = Contract(row["doc_id"], row["text"], [])
                if limit is not None and len(contracts) >= limit:
                    break
        path = data_dir / "cuad_qa.jsonl.gz"
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                q = json.loads(line)
                if q["doc_id"] in contracts:
                    answers = [] if q["is_impossible"] else [a for a in q["answers"] if a["text"].strip()]
                    contracts[q["doc_id"]].questions.append(
                        CuadQuestion(
                            q["id"],
                            q["category"],
                            [a["text"] for a in answers],
                            [int(a["answer_start"]) for a in answers],
                        )
                    )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CorruptDocument(str(path), f"not a CUAD file ({type(e).__name__}: {e})") from None
    return list(contracts.values())


def answer_words(text: str) -> list[str]:
    text = "".join(" " if c in string.punctuation else c for c in text.lower())
    return _ARTICLES.sub(" ", text).split()


def word_f1(pred: str, gold: str) -> float:
    return overlap_f1(answer_words(pred), answer_words(gold))


def jaccard(pred: str, gold: str) -> float:
    p, g = set(answer_words(pred)), set(answer_words(gold))
    return len(p & g) / len(p | g) if p | g else 1.0


def aupr(ranked: list[tuple[float, bool]], n_answerable: int) -> tuple[float, float | None]:
    """(area under the precision-recall curve, precision at 80% recall or None). ranked: (confidence,
    correct) of every answer given, over all questions; recall counts answerable questions."""
    if not ranked or n_answerable == 0:
        return 0.0, None
    order = sorted(ranked, key=lambda x: -x[0])
    correct = np.array([c for _, c in order], dtype=float)
    tp = np.cumsum(correct)
    precision = tp / np.arange(1, len(order) + 1)
    recall = tp / n_answerable
    # the step-wise area (average precision): precision where each new true positive lifts recall
    area = float(np.sum(np.diff(np.concatenate([[0.0], recall])) * precision))
    at80 = precision[recall >= 0.8]
    return area, (float(at80.max()) if at80.size else None)


def _normspace(text: str) -> str:
    return " ".join(text.split())


def contract_states(model, tokenizer, contract: Contract, passage_chars: int):
    """(passages, per-passage EncodedText): the contract encoded in order with memory."""
    passages = split_passages(contract.doc_id, "", contract.text, passage_chars)
    encs = tokenizer.hf.encode_batch([p.text for p in passages], add_special_tokens=False)
    segments = [
        Segment(contract.doc_id, i, 0, BlockType.CLAUSE, p.text, len(e.ids), 0, len(p.text))
        for i, (p, e) in enumerate(zip(passages, encs, strict=True))
    ]
    ids = [tokenizer.prefix_ids(BlockType.CLAUSE, i == 0) + list(e.ids) for i, e in enumerate(encs)]
    out = encode_document(model, segments, ids)
    states = [
        EncodedText(o.hidden[len(i) - len(e.ids) :].float().cpu(), [tuple(x) for x in e.offsets], list(e.ids))
        for o, i, e in zip(out, ids, encs, strict=True)
    ]
    return passages, states


def find_gold(gold: str, text: str) -> tuple[int, int] | None:
    """Character span of a gold clause in a passage, whatever whitespace the passage packing left."""
    m = re.search(r"\s+".join(map(re.escape, gold.split())), text)
    return (m.start(), m.end()) if m else None


def clause_questions(head, contracts: list[Contract]) -> list[tuple[CuadQuestion, object, bool]]:
    """(question, the clause head's hit for its category, whether its answer matches a gold clause) for
    every question whose category the head knows: the head answers from the whole contract."""
    out = []
    for contract in contracts:
        hits = {h.category: h for h in head.best(contract.text, contract_sentences(contract.text))}
        for cq in contract.questions:
            hit = hits.get(cq.category)
            if hit is not None:
                answer = contract.text[hit.answer[0] : hit.answer[1]]
                out.append((cq, hit, any(jaccard(answer, g) >= 0.5 for g in cq.golds)))
    return out


def evaluate_clauses(head, contracts: list[Contract]) -> dict:
    """AUPR of the clause head's answers (each question's likeliest sentence, or the name or date in it,
    ranked by confidence), counted as the reader's is, with the questions found per category."""
    return clause_figures(clause_questions(head, contracts))


def clause_figures(answered: list[tuple[CuadQuestion, object, bool]]) -> dict:
    """evaluate_clauses' figures from clause_questions' output."""
    ranked = [(hit.confidence, ok) for _, hit, ok in answered]
    n_answerable = sum(bool(cq.golds) for cq, _, _ in answered)
    area, p80 = aupr(ranked, n_answerable)
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cq, _, ok in answered:
        if cq.golds:
            found[cq.category][0] += ok
            found[cq.category][1] += 1
    return {
        "questions": len(answered),
        "answerable": n_answerable,
        "aupr": round(area, 4),
        "precision_at_80_recall": None if p80 is None else round(p80, 4),
        "found_by_category": {c: f"{k}/{n}" for c, (k, n) in sorted(found.items(), key=lambda x: -x[1][1])},
    }


@dataclass
class _Tally:
    """What evaluate_cuad counts over the contracts, for the reader and the baseline side by side."""

    recall: dict[int, list[float]] = field(default_factory=lambda: {n: [] for n in KS})
    f1s: dict[str, list[float]] = field(default_factory=lambda: {"reader": [], "baseline": []})
    by_category: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    ranked: dict[str, list[tuple[float, bool]]] = field(
        default_factory=lambda: {"reader": [], "baseline": []}
    )
    no_answer: list[float] = field(default_factory=list)
    given: dict[str, int] = field(
        default_factory=lambda: {"reader": 0, "baseline": 0}
    )  # the reader: said SPAN
    n_answerable: int = 0
    n_questions: int = 0
    n_passages: int = 0


def _read_contract(reader, contract: Contract, k: int, passage_chars: int):
    """(passages, retrieved rows per question, question per qid, the reader's predictions per qid)."""
    passages, states = contract_states(reader.model, reader.tokenizer, contract, passage_chars)
    index = HybridIndex(passages)
    hits_of = {
        cq.qid: [
            index.row_of[h.segment_id] for h in index.search(cq.category, k=max(max(KS), k), arms=["bm25"])
        ]
        for cq in contract.questions
    }
    question_of = {cq.qid: reader.question(cq.category) for cq in contract.questions}
    preds_of: dict[str, list] = defaultdict(list)
    for r in sorted({r for hits in hits_of.values() for r in hits[:k]}):  # one batch per passage read
        asking = [cq.qid for cq in contract.questions if r in hits_of[cq.qid][:k]]
        for qid, pred in zip(
            asking,
            reader.read_many(passages[r].text, states[r], [question_of[x] for x in asking]),
            strict=True,
        ):
            preds_of[qid].append(pred)
    return passages, hits_of, question_of, preds_of


def _score_question(
    tally: _Tally, cq: CuadQuestion, hits: list[int], q, preds: list, passages, flat: list[str]
) -> None:
    tally.n_questions += 1
    spans = [p for p in preds if p.label == "SPAN" and p.answer.strip()]
    best = max(spans, key=lambda p: p.confidence) if spans else None
    # AUPR ranks every question's best span, whatever the answer type said: the threshold decides
    ranked_span, ranked_conf = max((p.best_span for p in preds), key=lambda x: x[1], default=("", 0.0))
    top = passages[hits[0]].text if hits else ""
    base = overlap_baseline(top, q)
    base_conf = float(sum(t in q.terms for t in terms(base)))
    tally.given["reader"] += best is not None
    tally.given["baseline"] += 1
    if not cq.golds:
        tally.no_answer.append(float(best is None))
        tally.ranked["reader"].append((ranked_conf, False))
        tally.ranked["baseline"].append((base_conf, False))
        return
    tally.n_answerable += 1
    golds = [_normspace(g) for g in cq.golds]
    holding = {i for i, t in enumerate(flat) if any(g in t for g in golds)}
    if holding:
        for n in KS:
            tally.recall[n].append(float(bool(holding & set(hits[:n]))))
    for name, answer, ranked_answer, conf in (
        ("reader", best.answer if best else "", ranked_span, ranked_conf),
        ("baseline", base, base, base_conf),
    ):
        f1 = max(word_f1(answer, g) for g in golds)
        tally.f1s[name].append(f1)
        if name == "reader":
            tally.by_category[cq.category].append(f1)
        tally.ranked[name].append((conf, max(jaccard(ranked_answer, g) for g in golds) >= 0.5))


def _summary(tally: _Tally, head: dict) -> dict:
    result = {
        **head,
        "segment_recall": {
            f"@{n}": round(float(np.mean(v)), 4) if v else None for n, v in tally.recall.items()
        },
        "answer_in_some_passage": len(tally.recall[1]),
    }
    for name in ("reader", "baseline"):
        area, p80 = aupr(tally.ranked[name], tally.n_answerable)
        f1s = tally.f1s[name]
        result[name] = {
            "span_f1": round(100 * float(np.mean(f1s)), 2) if f1s else None,
            "aupr": round(area, 4),
            "precision_at_80_recall": None if p80 is None else round(p80, 4),
            "answers_given": tally.given[name],
        }
    no_answer = tally.no_answer
    result["reader"]["no_answer_acc"] = round(100 * float(np.mean(no_answer)), 2) if no_answer else None
    result["reader"]["span_f1_by_category"] = {
        c: round(100 * float(np.mean(v)), 1) for c, v in sorted(tally.by_category.items())
    }
    return result


def evaluate_cuad(
    reader,
    data_dir: Path,
    contracts: int | None = 20,
    k: int = 5,
    passage_chars: int = 1200,
    split: str = "heldout",
    clauses=None,
) -> dict:
    """The reader and the baseline over the split's first `contracts` contracts; with `clauses` (a
    retrieval.predict.clauses.ClauseHead) also that head on the same questions (`result["clauses"]`)."""
    t0 = time.perf_counter()
    tally = _Tally()
    loaded = load_cuad(data_dir, split, contracts)
    for contract in loaded:
        passages, hits_of, question_of, preds_of = _read_contract(reader, contract, k, passage_chars)
        tally.n_passages += len(passages)
        flat = [_normspace(p.text) for p in passages]
        for cq in contract.questions:
            _score_question(tally, cq, hits_of[cq.qid], question_of[cq.qid], preds_of[cq.qid], passages, flat)
    result = _summary(
        tally,
        {
            "contracts": len(loaded),
            "passages": tally.n_passages,
            "questions": tally.n_questions,
            "answerable": tally.n_answerable,
            "k": k,
            "passage_chars": passage_chars,
            "reader": reader.checkpoint,
        },
    )
    if clauses is not None:
        result["clauses"] = evaluate_clauses(clauses, loaded)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result
