"""Train the reader head on a SQuAD-2.0-layout file's training split (CJRC), the encoder frozen.

    nice -n 10 ldx train reader --qa ../shared/data/zh/qa/cjrc_dev.json
        [--checkpoint CKPT] [--out data/models/reader.pt] [--minutes 40] [--epochs 20]
        [--cuad ../shared/data/en/contracts --cuad-contracts 40] [--init HEAD]

The training split's contexts and questions are encoded once and cached as tensors (out/reader_cache/, keyed by
file and encoder); `--cuad` adds passage examples from CUAD's training contracts (split by contract); a tenth of the training contexts (a second hash rule) is kept for model selection,
so the held-apart split is read only once, by the final end-to-end evaluation. The best head so far
is written after every epoch, with the encoder's sha256 and its metrics.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pipeline.paths import REPO_ROOT
from pipeline.store import atomic_write_bytes
from retrieval.encoder import checkpoint_file, load_encoder, sha256_file
from retrieval.eval.cuad import contract_states, find_gold, load_cuad
from retrieval.eval.qa import QAItem, evaluate_qa, load_squad, score
from retrieval.eval.search import split_passages
from retrieval.hybrid import HybridIndex
from retrieval.reader.questions import LABELS, answer_label, answer_types
from retrieval.reader.runtime import (
    READER_FILE,
    EncodedText,
    Question,
    Reader,
    ReaderConfig,
    ReaderHead,
    batch_inputs,
    decode,
    encode_text,
    lexical_features,
    load_reader,
    prepare_question,
    question_of,
    tokenize,
)

CACHE_DIR = REPO_ROOT / "out" / "reader_cache"


@dataclass
class Example:
    text: str
    ctx: EncodedText
    lex: torch.Tensor  # [T, F]
    question: Question
    item: QAItem
    label: str
    span: tuple[int, int] | None  # gold token span of a SPAN question


def gold_span(context: str, ctx: EncodedText, item: QAItem) -> tuple[int, int] | None:
    """Token span of the first gold answer found in the context (at its answer_start when that fits)."""
    for text, a in zip(item.golds, item.starts, strict=False):
        if not text:
            continue
        if a < 0 or context[a : a + len(text)] != text:
            a = context.find(text)
        if a >= 0 and (span := char_to_token_span(ctx.offsets, a, a + len(text))) is not None:
            return span
    return None


def char_to_token_span(offsets: list[tuple[int, int]], a: int, b: int) -> tuple[int, int] | None:
    """Tokens covering characters [a, b); None when the span falls outside the encoded text."""
    s = next((i for i, (x, y) in enumerate(offsets) if y > a), None)
    e = next((i for i in range(len(offsets) - 1, -1, -1) if offsets[i][0] < b), None)
    if s is None or e is None or e < s:
        return None
    return s, e


def is_validation(context: str) -> bool:
    """A tenth of the training contexts, for model selection (a different byte of the hash than the split)."""
    return hashlib.blake2b(context.encode(), digest_size=8).digest()[1] % 10 == 0


def _text(model, tokenizer, text: str) -> EncodedText:
    """A context's fp16 states (the head reads them as fp32), or with no model its tokens alone (for a
    fine-tune, which encodes as it trains)."""
    enc = encode_text(model, tokenizer, text) if model is not None else tokenize(tokenizer, text)
    enc.hidden = enc.hidden.half()
    return enc


def _question(model, tokenizer, text: str) -> Question:
    if model is None:
        return question_of(text, tokenize(tokenizer, text))
    q = prepare_question(model, tokenizer, text)
    q.enc.hidden = q.enc.hidden.half()
    return q


def build_examples(
    path: Path, model, tokenizer, split: str = "train", max_contexts: int | None = None
) -> list[Example]:
    """The questions of `path`'s split with their contexts, encoded by `model` (None: tokens only)."""
    examples = []
    for n, (context, qas) in enumerate(load_squad(path, split)):
        if max_contexts is not None and n >= max_contexts:
            break
        ctx = _text(model, tokenizer, context)
        for item in qas:
            q = _question(model, tokenizer, item.question)
            label = answer_label(item.golds, item.impossible)
            span = gold_span(context, ctx, item) if label == "SPAN" else None
            if label == "SPAN" and span is None:
                continue  # the gold text is not in the context (an annotation slip): nothing to learn from
            examples.append(Example(context, ctx, lexical_features(context, ctx, q), q, item, label, span))
    return examples


def _encodings(examples: list[Example]) -> list[EncodedText]:
    """The distinct context and question encodings of `examples`, in a fixed order."""
    seen: set[int] = set()
    out = []
    for e in examples:
        for enc in (e.ctx, e.question.enc):
            if id(enc) not in seen:
                seen.add(id(enc))
                out.append(enc)
    return out


def cached(key: str, build, model) -> list[Example]:
    """build(model) through a cache of its states in out/reader_cache/ keyed by `key` (inputs and encoder).
    On a hit the examples are rebuilt from their files as tokens alone (build(None)) and given the cached
    states: a list of tensors read with weights_only, so nothing in the cache is ever executed."""
    cache = CACHE_DIR / f"{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}.pt"
    if cache.is_file():
        examples = build(None)
        encs = _encodings(examples)
        states = torch.load(cache, map_location="cpu", weights_only=True)
        if len(states) == len(encs) and all(
            h.size(0) == len(e.ids) for h, e in zip(states, encs, strict=True)
        ):
            for h, e in zip(states, encs, strict=True):
                e.hidden = h
            return examples
    examples = build(model)
    buf = io.BytesIO()
    torch.save([e.hidden for e in _encodings(examples)], buf)
    atomic_write_bytes(cache, buf.getvalue())
    return examples


def cuad_examples(
    data_dir: Path, model, tokenizer, contracts: int, k: int = 3, passage_chars: int = 1200
) -> list[Example]:
    """Passage-level examples from CUAD's training contracts: every passage holding a gold clause is a SPAN
    example of its question (the category, as `eval cuad` asks it), and the question's other top-k BM25
    passages are NONE examples, so the head learns to say no answer to a passage that only looks related."""
    examples = []
    for contract in load_cuad(data_dir, "train", contracts):
        if model is not None:
            passages, states = contract_states(model, tokenizer, contract, passage_chars)
        else:  # tokens only, for a fine-tune
            passages = split_passages(contract.doc_id, "", contract.text, passage_chars)
            states = [tokenize(tokenizer, p.text) for p in passages]
        for ctx in states:
            ctx.hidden = ctx.hidden.half()
        index = HybridIndex(passages)
        for cq in contract.questions:
            q = _question(model, tokenizer, cq.category)
            top = [index.row_of[h.segment_id] for h in index.search(cq.category, k=k, arms=["bm25"])]
            spans = {}
            for i, p in enumerate(passages):
                for gold in cq.golds:
                    if i not in spans and (at := find_gold(gold, p.text)) is not None:
                        spans[i] = at
            for i in sorted(set(top) | set(spans)):
                text, ctx = passages[i].text, states[i]
                span = char_to_token_span(ctx.offsets, *spans[i]) if i in spans else None
                if i in spans and span is None:
                    continue
                gold = text[spans[i][0] : spans[i][1]] if i in spans else ""
                item = QAItem(f"{cq.qid}#{i}", cq.category, [gold], not gold)
                examples.append(
                    Example(
                        text, ctx, lexical_features(text, ctx, q), q, item, "SPAN" if span else "NONE", span
                    )
                )
    return examples


def _batches(examples: list[Example], batch_size: int, rng: np.random.Generator) -> list[list[Example]]:
    """Shuffled batches of similar context length (less padding for the GRU)."""
    order = rng.permutation(len(examples))
    pool = batch_size * 16
    out = []
    for i in range(0, len(order), pool):
        chunk = sorted(order[i : i + pool], key=lambda j: len(examples[j].ctx.ids))
        out += [[examples[j] for j in chunk[k : k + batch_size]] for k in range(0, len(chunk), batch_size)]
    return [out[i] for i in rng.permutation(len(out))]


@torch.no_grad()
def predict(head: ReaderHead, examples: list[Example], batch_size: int = 64) -> dict[str, str]:
    head.eval()
    preds = {}
    for i in range(0, len(examples), batch_size):
        batch = examples[i : i + batch_size]
        start, end, cls = head(*batch_inputs([(e.ctx, e.lex, e.question) for e in batch]))
        for b, e in enumerate(batch):
            n = len(e.ctx.ids)
            preds[e.item.qid] = decode(
                e.text, e.ctx, start[b, :n], end[b, :n], cls[b], answer_types(e.item.question)
            ).answer
    return preds


def _batch_loss(head: ReaderHead, batch: list[Example], ce: nn.CrossEntropyLoss) -> torch.Tensor:
    return answer_loss(*head(*batch_inputs([(e.ctx, e.lex, e.question) for e in batch])), batch, ce)


def answer_loss(
    start: torch.Tensor, end: torch.Tensor, cls: torch.Tensor, batch: list[Example], ce: nn.CrossEntropyLoss
) -> torch.Tensor:
    """Answer-type loss of every question, plus start and end losses of those with an answer span."""
    loss = ce(cls, torch.tensor([LABELS.index(e.label) for e in batch]))
    rows = [b for b, e in enumerate(batch) if e.span is not None]
    if rows:
        r = torch.tensor(rows)
        loss = (
            loss
            + ce(start[r], torch.tensor([batch[b].span[0] for b in rows]))
            + ce(end[r], torch.tensor([batch[b].span[1] for b in rows]))
        )
    return loss


def train_head(
    examples: list[Example],
    cfg: ReaderConfig,
    epochs: int = 20,
    lr: float = 2e-3,
    batch_size: int = 32,
    seed: int = 0,
    valid: list[Example] | None = None,
    minutes: float | None = None,
    on_best=None,
    init: ReaderHead | None = None,
) -> tuple[ReaderHead, list[dict]]:
    """Train a head (learning rate decayed linearly to a tenth over `epochs`); with `valid`, keep the epoch
    with the best validation F1 (`on_best(head, row)` is
    called each time it improves). -> (head, one log row per epoch)."""
    torch.manual_seed(seed)
    head = ReaderHead(cfg)
    if init is not None:
        head.load_state_dict(init.state_dict())
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.01)
    rng = np.random.default_rng(seed)
    # linear decay to a tenth over the planned steps: the answer-type calibration swings at a constant rate
    steps = epochs * len(_batches(examples, batch_size, np.random.default_rng(seed)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1.0 - 0.9 * min(i / max(steps, 1), 1.0))
    ce = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    log, best_f1, best_state = [], -1.0, None
    for epoch in range(epochs):
        head.train()
        total = 0.0
        for batch in _batches(examples, batch_size, rng):
            loss = _batch_loss(head, batch, ce)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(head.parameters(), 5.0)
            opt.step()
            sched.step()
            total += loss.item() * len(batch)
        row = {
            "epoch": epoch + 1,
            "loss": round(total / len(examples), 4),
            "minutes": round((time.perf_counter() - t0) / 60, 1),
        }
        if valid:
            m = score(predict(head, valid), [e.item for e in valid])
            row.update({k: m[k] for k in ("em", "f1", "yes_no_acc", "no_answer_acc")})
            if m["f1"] > best_f1:
                best_f1, best_state = m["f1"], {k: v.clone() for k, v in head.state_dict().items()}
                if on_best is not None:
                    on_best(head, row)
        log.append(row)
        print(json.dumps(row), flush=True)
        if minutes is not None and time.perf_counter() - t0 > 60 * minutes:
            break
    if best_state is not None:
        head.load_state_dict(best_state)
    return head.eval(), log


def _split_examples(
    qa: Path, cuad: Path | None, model, tokenizer, encoder_sha: str, contexts: int | None, cuad_contracts: int
) -> tuple[list[Example], list[Example]]:
    """The encoded training questions of `qa` (and CUAD's contracts with `cuad`), cached per encoder,
    split into (training, validation) by their context text."""
    examples = cached(
        f"{qa.resolve()}|{encoder_sha}|{contexts}",
        lambda m: build_examples(qa, m, tokenizer, "train", contexts),
        model,
    )
    if cuad is not None:
        examples += cached(
            f"{cuad.resolve()}|{encoder_sha}|{cuad_contracts}|cuad",
            lambda m: cuad_examples(cuad, m, tokenizer, cuad_contracts),
            model,
        )
    train = [e for e in examples if not is_validation(e.text)]
    valid = [e for e in examples if is_validation(e.text)]
    return train, valid


def train_reader(
    qa: Path,
    out: Path = READER_FILE,
    checkpoint: str | None = None,
    contexts: int | None = None,
    eval_contexts: int | None = None,
    cuad: Path | None = None,
    cuad_contracts: int = 40,
    init: Path | None = None,
    epochs: int = 20,
    minutes: float | None = 40.0,
    lr: float = 2e-3,
) -> dict:
    """Train a reader head on `qa`'s training split (and CUAD's training contracts with `cuad`), keep the
    best validation epoch in `out` as it goes, then read the held-apart split end to end; returns the
    metrics saved with the head. `minutes` bounds the training, the encoding not counted."""
    path = checkpoint_file(checkpoint)
    if path is None or not path.is_file():
        raise ValueError(
            f"{path or 'data/models/'}: no encoder checkpoint (pass one or ship one in data/models/)"
        )
    encoder_sha = sha256_file(path)
    model, tokenizer = load_encoder(path, "cpu")
    t0 = time.perf_counter()
    train, valid = _split_examples(qa, cuad, model, tokenizer, encoder_sha, contexts, cuad_contracts)
    t1 = time.perf_counter()
    print(
        f"{len(train)} training / {len(valid)} validation questions, encoded in {t1 - t0:.0f} s", flush=True
    )
    cfg = ReaderConfig(model.cfg.d_model)
    record = {
        "train_file": str(qa),
        "cuad": str(cuad) if cuad else None,
        "init": str(init) if init else None,
        "train_questions": len(train),
        "valid_questions": len(valid),
        "encoder": path.name,
        "config": vars(cfg),
    }

    def save(head: ReaderHead, row: dict) -> None:
        Reader(head, model, tokenizer).save(out, encoder_sha, {**record, "best_epoch": row})

    # a warm start reuses only the weights, so a head trained on another encoder (the encoder's previous
    # sitting) may seed this one; the head written records the encoder it is trained on now
    start = load_reader(init, model, tokenizer).head if init else None
    head, log = train_head(train, cfg, epochs, lr, valid=valid, minutes=minutes, on_best=save, init=start)
    reader = Reader(head, model, tokenizer, str(out))
    held = evaluate_qa(qa, reader, "heldout", eval_contexts)
    metrics = {
        **record,
        "train_log": log,
        "heldout": held,
        "encode_s": round(t1 - t0, 1),
        "train_s": round(time.perf_counter() - t1, 1),
    }
    reader.save(out, encoder_sha, metrics)
    return metrics
