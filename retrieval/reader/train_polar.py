"""Fitting the yes-no decider (`retrieval.reader.polar`) for a reader: from the yes-no questions of the
QA file's training contexts outside the validation tenth the reader trained on, scored on that tenth.

    fit_polar(qa, reader_path, checkpoint=None) -> dict    # writes polar.json beside the reader
"""

from __future__ import annotations

from pathlib import Path

from retrieval.encoder import checkpoint_file, load_encoder, sha256_file
from retrieval.eval.qa import load_squad
from retrieval.reader.polar import POLAR_LABELS, PolarHead, polar_file
from retrieval.reader.questions import POLAR_TYPES, answer_label, answer_types
from retrieval.reader.runtime import encode_text, load_reader
from retrieval.reader.train import is_validation


def polar_rows(reader, qa: Path, split: str = "train") -> dict[str, list[tuple[str, str, list[float], str]]]:
    """{"train" | "validation": [(question, context, the head's YES/NO/NONE scores, gold label)]} of
    the yes-no questions (by their form) of the file's training split; {"heldout": [...]} of its
    held-apart split with `split="heldout"`."""
    if split not in ("train", "heldout"):  # "all" would file held-apart contexts under train
        raise ValueError(f"split must be 'train' or 'heldout', not {split!r}")
    rows: dict[str, list] = {"heldout": []} if split == "heldout" else {"train": [], "validation": []}
    for context, items in load_squad(qa, split):
        asking = [it for it in items if answer_types(it.question) == POLAR_TYPES]
        if not asking:
            continue
        ctx = encode_text(reader.model, reader.tokenizer, context)
        _, _, cls = reader.head_outputs(context, ctx, [reader.question(it.question) for it in asking])
        part = split if split == "heldout" else "validation" if is_validation(context) else "train"
        for it, scores in zip(asking, cls[:, 1:].tolist(), strict=True):
            label = answer_label(it.golds, it.impossible)
            if label in POLAR_LABELS:  # a yes-no question whose gold is a span has no label here
                rows[part].append((it.question, context, scores, label))
    return rows


def fit_polar(qa: Path, reader_path: Path, checkpoint: str | None = None) -> dict:
    """Fit, score and save the decider of the reader at `reader_path`; returns its metrics: validation
    accuracy over YES / NO / no answer against the reader's own choice among the three."""
    model, tokenizer = load_encoder(checkpoint_file(checkpoint), "cpu")
    reader = load_reader(reader_path, model, tokenizer)
    rows = polar_rows(reader, qa)
    polar = PolarHead.fit(rows["train"], sha256_file(reader_path))
    gold = [POLAR_LABELS.index(label) for *_, label in rows["validation"]]
    head = [max(range(3), key=scores.__getitem__) for _, _, scores, _ in rows["validation"]]
    decided = [int(polar.log_probs(q, c, s).argmax()) for q, c, s, _ in rows["validation"]]
    n = max(len(gold), 1)
    polar.metrics = {
        "train_questions": len(rows["train"]),
        "validation_questions": len(gold),
        "validation_accuracy": sum(a == b for a, b in zip(decided, gold, strict=True)) / n,
        "validation_accuracy_head": sum(a == b for a, b in zip(head, gold, strict=True)) / n,
    }
    polar.save(polar_file(reader_path))
    return polar.metrics
