"""End-to-end extractive QA evaluation on any SQuAD-2.0-layout file (CJRC's layout).

`data[].paragraphs[].{context, qas[].{id, question, answers[].{text, answer_start}, is_impossible}}`;
a YES/NO question has the gold text "YES"/"NO". A multi-span file (CAIL2021's) gives each annotator's
answer as a list of spans; that gold is the spans' texts joined in order, which char-level F1 scores
like their union. Metrics: EM and F1 with CJRC's normalisation (char-level F1, best over the gold
answers), YES/NO accuracy, no-answer accuracy, each beside a trivial baseline read in the same run.

The held-apart split is fixed by the context text: a paragraph whose blake2b hash is 0 mod 5 is held
apart (about 20%); the reader trains only on the others, so `--split heldout` measures it on unseen
contexts of the same file.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.errors import CorruptDocument
from retrieval.eval.metrics import best_over_golds
from retrieval.reader.runtime import Question, encode_text, term_spans

SPLITS = ("all", "heldout", "train")


@dataclass
class QAItem:
    qid: str
    question: str
    golds: list[str]  # "" for no answer, "YES"/"NO" for yes/no questions
    impossible: bool
    starts: list[int] = field(default_factory=list)  # answer_start of each gold; -1 unknown or multi-span


def held_apart(key: str) -> bool:
    """The fixed held-apart rule (about 1 in 5), keyed by a context's text or a contract's doc_id."""
    return hashlib.blake2b(key.encode(), digest_size=8).digest()[0] % 5 == 0


def in_split(context: str, split: str) -> bool:
    return split == "all" or (split == "heldout") == held_apart(context)


def _gold(answer) -> tuple[str, int]:
    if isinstance(answer, list):  # one annotator's spans of a multi-span answer
        return "".join(a["text"] for a in answer), -1
    return answer["text"], int(answer.get("answer_start", -1))


def load_squad(path: Path, split: str = "all") -> Iterator[tuple[str, list[QAItem]]]:
    """(context, questions) per paragraph of the chosen split."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))["data"]
        for article in data:
            for par in article.get("paragraphs", []):
                context = par["context"]
                if not in_split(context, split):
                    continue
                items = []
                for qa in par["qas"]:
                    impossible = str(qa.get("is_impossible", False)).lower() == "true"
                    golds = [_gold(a) for a in qa.get("answers", [])] or [("", -1)]
                    texts = [""] if impossible else [t for t, _ in golds]
                    items.append(
                        QAItem(str(qa["id"]), qa["question"], texts, impossible, [s for _, s in golds])
                    )
                yield context, items
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
        raise CorruptDocument(str(path), f"not a SQuAD-2.0 layout file ({type(e).__name__}: {e})") from None


_CLAUSE = re.compile(r"[^，。；：！？,.;:!?\n]+")


def overlap_baseline(text: str, q: Question) -> str:
    """The trivial reader the head must beat: always a span (the majority type), the clause of the context
    sharing the most question terms."""
    best, best_n = "", -1
    for m in _CLAUSE.finditer(text):
        n = sum(t in q.terms for t, _, _ in term_spans(m.group()))
        if n > best_n:
            best, best_n = m.group().strip(), n
    return best


def score(predictions: dict[str, str], items: list[QAItem]) -> dict:
    """The metrics of predictions (question id -> "", "YES", "NO" or a span) against the gold answers."""
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        pred = predictions.get(item.qid, "")
        em, f1 = best_over_golds(pred, item.golds)
        sums["em"] += em
        sums["f1"] += f1
        counts["all"] += 1
        if item.impossible:
            counts["no_answer"] += 1
            sums["no_answer_acc"] += float(pred == "")
        elif item.golds[0] in ("YES", "NO"):
            counts["yes_no"] += 1
            sums["yes_no_acc"] += float(pred == item.golds[0])
        else:
            counts["span"] += 1
            sums["span_f1"] += f1
    n = max(counts["all"], 1)
    return {
        "n_questions": counts["all"],
        "em": round(100 * sums["em"] / n, 2),
        "f1": round(100 * sums["f1"] / n, 2),
        "span_f1": round(100 * sums["span_f1"] / max(counts["span"], 1), 2),
        "yes_no_acc": round(100 * sums["yes_no_acc"] / max(counts["yes_no"], 1), 2),
        "no_answer_acc": round(100 * sums["no_answer_acc"] / max(counts["no_answer"], 1), 2),
        "counts": {k: counts[k] for k in ("span", "yes_no", "no_answer")},
    }


def evaluate_qa(path: Path, reader, split: str = "all", limit: int | None = None) -> dict:
    """Read every question of the file (context encoded once per paragraph) and score the answers, beside
    the overlap baseline (always a span: the clause sharing the most question terms)."""
    t0 = time.perf_counter()
    predictions: dict[str, str] = {}
    baseline: dict[str, str] = {}
    items: list[QAItem] = []
    for n, (context, qas) in enumerate(load_squad(path, split)):
        if limit is not None and n >= limit:
            break
        ctx = encode_text(reader.model, reader.tokenizer, context)
        questions = [reader.question(item.question) for item in qas]
        for item, q, pred in zip(qas, questions, reader.read_many(context, ctx, questions), strict=True):
            predictions[item.qid] = pred.answer
            baseline[item.qid] = overlap_baseline(context, q)
            items.append(item)
    return {
        "file": str(path),
        "split": split,
        "reader": reader.checkpoint,
        "none_margin": reader.none_margin,
        **score(predictions, items),
        "baseline_overlap_clause": score(baseline, items),
        "seconds": round(time.perf_counter() - t0, 1),
    }
