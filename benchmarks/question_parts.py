"""Questions asking two things at once (…的时间以及…的费用？), read whole or in parts
(retrieval.reader.questions.question_parts), by the shipped reader with its shipped decisions.

The reader gives one span per question. CAIL2021's multi-span set asks mostly such questions ("X及Y？",
gold: two to five spans); CJRC asks one thing per question, so there reading in parts must cost nothing.
Per set: EM / F1 / no-answer accuracy read whole and in parts, in the same run, and the paired F1
difference with a 95% bootstrap interval over contexts; how many questions were split; and, for what the
no-answer margin costs here, the questions read whole without it. Sets: the
multi-span file's training split and its held-apart split; CJRC's validation contexts (the tenth of the
training split the reader kept for model selection) and its held-apart split.

    PYTHONPATH=. .venv/bin/python benchmarks/question_parts.py [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

from none_margin import metrics, paired_interval, per_context, shipped_reader

from pipeline.paths import SHARED_DATA
from retrieval.eval.qa import load_squad
from retrieval.reader.runtime import READER_FILE, encode_text
from retrieval.reader.train import is_validation

QA = SHARED_DATA / "zh" / "qa"
SETS = {  # name: (file, split, validation contexts only)
    "multispan_train": (QA / "cjrc3_multispan.json", "train", False),
    "multispan_heldout": (QA / "cjrc3_multispan.json", "heldout", False),
    "cjrc_validation": (QA / "cjrc_dev.json", "train", True),
    "cjrc_heldout": (QA / "cjrc_dev.json", "heldout", False),
}


def read_set(reader, path: Path, split: str, validation: bool) -> tuple[list, dict[str, list], int]:
    """(contexts as [(item, None)] lists, answers per reading: whole, whole without the no-answer margin,
    in parts; questions split)."""
    contexts, said, split_n = [], {"whole": [], "whole_no_margin": [], "in_parts": []}, 0
    margin = reader.none_margin
    for context, items in load_squad(path, split):
        if validation and not is_validation(context):
            continue
        ctx = encode_text(reader.model, reader.tokenizer, context)
        questions = [reader.question(item.question) for item in items]
        split_n += sum(bool(q.parts) for q in questions)
        alone = [dataclasses.replace(q, parts=()) for q in questions]
        contexts.append([(item, None) for item in items])
        said["whole"].append([a.answer for a in reader.read_many(context, ctx, alone)])
        said["in_parts"].append([a.answer for a in reader.read_many(context, ctx, questions)])
        reader.none_margin = 0.0
        said["whole_no_margin"].append([a.answer for a in reader.read_many(context, ctx, alone)])
        reader.none_margin = margin
    return contexts, said, split_n


def figures(contexts: list, said: list) -> dict:
    out = metrics(contexts, said)
    return {k: out[k] for k in ("n_questions", "em", "f1", "no_answer_acc")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    reader = shipped_reader(args.threads)
    out: dict = {"reader": str(READER_FILE), "none_margin": reader.none_margin}
    for name, (path, split, validation) in SETS.items():
        contexts, said, split_n = read_set(reader, path, split, validation)
        whole, parted = per_context(contexts, said["whole"]), per_context(contexts, said["in_parts"])
        out[name] = {
            "questions_split": split_n,
            **{reading: figures(contexts, answers) for reading, answers in said.items()},
            "f1_difference": paired_interval(whole, parted, 0, 2),
        }
        print(name, json.dumps(out[name]), flush=True)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
