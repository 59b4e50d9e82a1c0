"""Fine-tune the reader head on a SQuAD-2.0-layout file's training split (CJRC), frozen encoder.

    python -m retrieval.train_reader --qa ../shared/data/zh/qa/cjrc_dev.json [--checkpoint CKPT]
        [--out data/models/reader.pt] [--contexts 400] [--epochs 8]

Writes the head with the encoder's sha256 and its held-apart metrics (eval_qa's fixed split).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from retrieval.encoder import ROOT, checkpoint_file, load_encoder, sha256_file
from retrieval.eval_qa import evaluate_qa, load_squad
from retrieval.reader import (
    Reader,
    answer_label,
    char_to_token_span,
    encode_text,
    question_vector,
    train_head,
)

READER_FILE = ROOT / "data" / "models" / "reader.pt"


def build_examples(path: Path, model, tokenizer, max_contexts: int | None) -> list:
    examples = []
    raw = json.loads(Path(path).read_text(encoding="utf-8"))["data"]
    starts = {}  # question id -> answer_start of the first gold answer
    for art in raw:
        for par in art["paragraphs"]:
            for qa in par["qas"]:
                if qa.get("answers"):
                    starts[str(qa["id"])] = qa["answers"][0].get("answer_start", -1)
    for n, (context, qas) in enumerate(load_squad(path, "train")):
        if max_contexts is not None and n >= max_contexts:
            break
        ctx = encode_text(model, tokenizer, context)
        for item in qas:
            label, text = answer_label([{"text": g} for g in item.golds], item.impossible)
            span = None
            if label == "SPAN":
                a = starts.get(item.qid, -1)
                if a < 0 or context[a : a + len(text)] != text:
                    a = context.find(text)
                span = char_to_token_span(ctx.offsets, a, a + len(text)) if a >= 0 else None
                if span is None:
                    continue
            examples.append((ctx, question_vector(model, tokenizer, item.question), label, span))
    return examples


def main() -> None:
    ap = argparse.ArgumentParser(description="Train the reader head on a SQuAD-2.0-layout file.")
    ap.add_argument("--qa", type=Path, required=True)
    ap.add_argument("--checkpoint", default=None, help="encoder checkpoint; default: the shipped one")
    ap.add_argument("--out", type=Path, default=READER_FILE)
    ap.add_argument("--contexts", type=int, default=400, help="training contexts to encode (CPU cost)")
    ap.add_argument("--eval-contexts", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    path = checkpoint_file(args.checkpoint)
    if path is None or not path.is_file():
        raise SystemExit("no encoder checkpoint: pass --checkpoint or ship one in data/models/")
    model, tokenizer = load_encoder(path)
    t0 = time.perf_counter()
    examples = build_examples(args.qa, model, tokenizer, args.contexts)
    t1 = time.perf_counter()
    head = train_head(examples, model.cfg.d_model, epochs=args.epochs)
    reader = Reader(head, model, tokenizer, str(args.out))
    metrics = evaluate_qa(args.qa, reader, "heldout", args.eval_contexts)
    metrics.update(train_examples=len(examples), encode_s=round(t1 - t0, 1), train_s=round(time.perf_counter() - t1, 1),
                   encoder=str(path))
    reader.save(args.out, sha256_file(path), metrics)
    print(json.dumps(metrics, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
