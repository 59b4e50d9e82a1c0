"""End-to-end extractive QA evaluation on any SQuAD-2.0-layout file (CJRC's layout).

`data[].paragraphs[].{context, qas[].{id, question, answers[].{text, answer_start}, is_impossible}}`;
a YES/NO question has the gold text "YES"/"NO". Metrics: EM and F1 with CJRC's normalisation
(char-level F1, best over the gold answers), YES/NO accuracy, no-answer accuracy.

The held-apart split is fixed by the context text: a paragraph whose blake2b hash is 0 mod 5 is held
apart (about 20%); the reader trains only on the others, so `--split heldout` measures it on unseen
contexts of the same file.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import CorruptDocument
from retrieval.metrics import best_over_golds

SPLITS = ("all", "heldout", "train")


@dataclass
class QAItem:
    qid: str
    question: str
    golds: list[str]  # "" for no answer, "YES"/"NO" for yes/no questions
    impossible: bool


def in_split(context: str, split: str) -> bool:
    held = hashlib.blake2b(context.encode(), digest_size=8).digest()[0] % 5 == 0
    return split == "all" or (split == "heldout") == held


def load_squad(path: Path, split: str = "all") -> Iterator[tuple[str, list[QAItem]]]:
    """(context, questions) per paragraph of the chosen split."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise CorruptDocument(str(path), f"not a SQuAD-2.0 layout file ({type(e).__name__}: {e})") from None
    for article in data:
        for par in article.get("paragraphs", []):
            context = par["context"]
            if not in_split(context, split):
                continue
            items = []
            for qa in par["qas"]:
                impossible = str(qa.get("is_impossible", False)).lower() == "true"
                golds = [a["text"] for a in qa.get("answers", [])] or [""]
                items.append(QAItem(str(qa["id"]), qa["question"], [""] if impossible else golds, impossible))
            yield context, items


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
    """Read every question of the file (context encoded once per paragraph) and score the answers."""
    from retrieval.reader import encode_text, question_vector

    predictions: dict[str, str] = {}
    items: list[QAItem] = []
    for n, (context, qas) in enumerate(load_squad(path, split)):
        if limit is not None and n >= limit:
            break
        ctx = encode_text(reader.model, reader.tokenizer, context)
        for item in qas:
            q = question_vector(reader.model, reader.tokenizer, item.question)
            predictions[item.qid] = reader.read(ctx, q, context)[0]
            items.append(item)
    return {"file": str(path), "split": split, "reader": reader.checkpoint, **score(predictions, items)}
