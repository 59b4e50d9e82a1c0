"""The confidence threshold below which `ldx ask` withholds the reader's answer (retrieval.answer.ANSWER_THRESHOLD),
chosen on CJRC validation contexts: the tenth of the training split the reader training keeps for model
selection (retrieval.reader.train.is_validation), never the held-apart test split.

    nice -n 19 .venv/bin/python benchmarks/ask_threshold.py [--contexts 15]

Per question: the reader's P(answer type) when it answers (NONE counts as abstaining), whether the answer is
right (char-F1 >= 0.5 with the best gold; YES/NO exact), whether the question has an answer; then
retrieval.eval.metrics.choose_threshold maximises F1 of answer-vs-abstain.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from pipeline.paths import SHARED_DATA
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.eval.metrics import best_over_golds, choose_threshold
from retrieval.eval.qa import load_squad
from retrieval.reader.runtime import READER_FILE, encode_text, load_reader
from retrieval.reader.train import is_validation

RIGHT_F1 = 0.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qa", default=str(SHARED_DATA / "zh" / "qa" / "cjrc_dev.json"))
    ap.add_argument("--contexts", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, tok = load_encoder(checkpoint_file(None), "cpu")
    reader = load_reader(READER_FILE, model, tok)
    conf, right, answerable = [], [], []
    t0, n = time.perf_counter(), 0
    for context, qas in load_squad(args.qa, "train"):
        if not is_validation(context):
            continue
        if n >= args.contexts:
            break
        n += 1
        ctx = encode_text(reader.model, tok, context)
        questions = [reader.question(item.question) for item in qas]
        for item, pred in zip(qas, reader.read_many(context, ctx, questions), strict=True):
            answerable.append(not item.impossible and bool(item.golds and item.golds[0]))
            conf.append(pred.type_prob if pred.answer else 0.0)
            right.append(
                bool(pred.answer)
                and answerable[-1]
                and best_over_golds(pred.answer, item.golds)[1] >= RIGHT_F1
            )
    threshold, f1 = choose_threshold(conf, right, answerable)
    _, f1_all = choose_threshold([1.0 if c > 0 else 0.0 for c in conf], right, answerable)
    print(
        json.dumps(
            {
                "contexts": n,
                "questions": len(conf),
                "answerable": sum(answerable),
                "right": sum(right),
                "threshold": round(threshold, 4),
                "f1": round(f1, 4),
                "f1_answer_all": round(f1_all, 4),
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
