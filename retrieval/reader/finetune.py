"""Fine-tune the reader end to end: the encoder's layers train with the head.

    nice -n 10 ldx train reader --qa ../shared/data/zh/qa/cjrc_dev.json --end-to-end
        [--init data/models/reader.pt] [--cuad ../shared/data/en/contracts] [--minutes 45]

The head starts from a reader trained on the frozen encoder (`--init`); the encoder's layers train beside
it at a lower learning rate, while its embeddings and softmax stay as the LM left them, so the reader file
carries only the layers it changed (3.4 M parameters, 6.8 MB in fp16) and the shipped encoder keeps serving
the index and search. Contexts are read as `ldx ask` reads them (segments of 384 tokens with recurrence
memory); a step is a few contexts with all their questions, so each context is encoded once per step.
Validation F1 (the tenth of the training contexts the head-only training selects on) is measured every
`eval_every` steps; the best weights are written as they come, and training stops after `patience`
evaluations without a gain. Then the answer-type temperature is fitted on the validation questions (the
expected calibration error reported before and after) and the held-apart split is read once, end to end.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from pipeline.records import BlockType
from retrieval.encoder import checkpoint_file, load_encoder, sha256_file
from retrieval.eval.qa import evaluate_qa, score
from retrieval.reader.questions import LABELS, answer_types
from retrieval.reader.runtime import (
    READER_FILE,
    Reader,
    ReaderHead,
    decode,
    encode_states,
    load_reader,
)
from retrieval.reader.train import Example, answer_loss, build_examples, cuad_examples, is_validation

FROZEN = ("emb.", "crit.")  # the LM's embeddings and softmax: shared with the index encoder, left as they are
Group = tuple[BlockType, list[Example]]  # one context and every question on it


@dataclass
class FinetuneConfig:
    epochs: int = 4
    minutes: float = 45.0  # training time, the evaluations counted
    head_lr: float = 5e-4
    encoder_lr: float = 5e-5
    encoder_dropout: float = 0.1  # the LM trained without dropout; a few thousand questions need some
    contexts_per_batch: int = 4
    eval_every: int = 100  # steps
    patience: int = 3  # evaluations without a better validation F1
    warmup: int = 30  # steps
    cuad_passages: int = 300  # CUAD passages (with their questions) drawn into each epoch
    threads: int = 1
    seed: int = 0


def groups_of(examples: list[Example], block_type: BlockType) -> list[Group]:
    """Examples gathered by the context they share (build_examples gives each context one object)."""
    by: dict[int, list[Example]] = {}
    for e in examples:
        by.setdefault(id(e.ctx), []).append(e)
    return [(block_type, g) for g in by.values()]


def forward(model, tokenizer, head: ReaderHead, groups: list[Group]):
    """The head's outputs over every question of `groups`, the contexts and questions encoded here (with
    autograd when it is on). -> (start [B, T], end [B, T], answer-type logits [B, 4], the B examples)."""
    states: dict[int, torch.Tensor] = {}
    for kind in {k for k, _ in groups}:
        at = [i for i, (k, _) in enumerate(groups) if k == kind]
        states.update(
            zip(at, encode_states(model, tokenizer, [groups[i][1][0].ctx.ids for i in at], kind), strict=True)
        )
    batch = [e for _, g in groups for e in g]
    q_states = encode_states(model, tokenizer, [e.question.enc.ids for e in batch], BlockType.OTHER)
    ctx = [states[i] for i, (_, g) in enumerate(groups) for _ in g]
    c = pad_sequence(ctx, batch_first=True)  # [B, T, d]
    q = pad_sequence(q_states, batch_first=True)  # [B, Q, d]
    c_mask = torch.arange(c.size(1))[None, :] < torch.tensor([len(h) for h in ctx])[:, None]
    q_mask = torch.arange(q.size(1))[None, :] < torch.tensor([len(h) for h in q_states])[:, None]
    lex = pad_sequence([e.lex for e in batch], batch_first=True)  # [B, T, F]
    return (*head(c, c_mask, lex, q, q_mask), batch)


@torch.no_grad()
def read_groups(model, tokenizer, head: ReaderHead, groups: list[Group], per_call: int = 8):
    """-> (answers by question id, answer-type logits [N, 4], gold label index [N])."""
    model.eval()
    head.eval()
    answers, logits, gold = {}, [], []
    for i in range(0, len(groups), per_call):
        start, end, cls, batch = forward(model, tokenizer, head, groups[i : i + per_call])
        for b, e in enumerate(batch):
            n = len(e.ctx.ids)
            answers[e.item.qid] = decode(
                e.text, e.ctx, start[b, :n], end[b, :n], cls[b], answer_types(e.item.question)
            ).answer
        logits.append(cls)
        gold += [LABELS.index(e.label) for e in batch]
    return answers, torch.cat(logits), torch.tensor(gold)


def expected_calibration_error(probs: torch.Tensor, gold: torch.Tensor, bins: int = 10) -> float:
    """Of the answer type: |accuracy − confidence| over equal-width confidence bins, weighted by bin size."""
    conf, pred = probs.max(-1)
    right = (pred == gold).float()
    edges = torch.linspace(0, 1, bins + 1)
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            ece += float(inside.float().mean() * (right[inside].mean() - conf[inside].mean()).abs())
    return round(ece, 4)


def fit_calibration(logits: torch.Tensor, gold: torch.Tensor) -> tuple[float, tuple[float, ...]]:
    """(temperature, per-type bias) with the lowest answer-type NLL of logits / temperature + bias on these
    questions: the bias moves the types' base rates to what the questions show (the head, trained from a
    warm start, says no answer far less often than CJRC's quarter)."""
    log_t = torch.zeros(1, requires_grad=True)
    bias = torch.zeros(logits.size(1), requires_grad=True)
    opt = torch.optim.LBFGS([log_t, bias], lr=0.5, max_iter=200)

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(logits / log_t.exp() + bias, gold)
        loss.backward()
        return loss

    opt.step(closure)
    b = bias.detach() - bias.detach().mean()  # softmax ignores a shared shift
    return round(float(log_t.detach().exp()), 3), tuple(round(float(x), 3) for x in b)


def _optimizer(model, head: ReaderHead, cfg: FinetuneConfig, steps: int):
    for name, p in model.named_parameters():
        p.requires_grad_(not name.startswith(FROZEN))
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = cfg.encoder_dropout
    tuned = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": head.parameters(), "lr": cfg.head_lr}, {"params": tuned, "lr": cfg.encoder_lr}],
        weight_decay=0.01,
    )

    def rate(i: int) -> float:  # warm up, then down linearly to a tenth
        return min(1.0, (i + 1) / cfg.warmup) * (1.0 - 0.9 * min(i / max(steps, 1), 1.0))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, rate)


def _epoch_batches(train: list[Group], cuad: list[Group], cfg: FinetuneConfig, rng) -> list[list[Group]]:
    """This epoch's contexts (all of CJRC's, a fresh draw of CUAD's) in batches of similar length."""
    drawn = [cuad[i] for i in rng.permutation(len(cuad))[: cfg.cuad_passages]]
    pool = train + drawn
    order = sorted(rng.permutation(len(pool)), key=lambda i: len(pool[i][1][0].ctx.ids))
    n = cfg.contexts_per_batch
    batches = [[pool[i] for i in order[k : k + n]] for k in range(0, len(order), n)]
    return [batches[i] for i in rng.permutation(len(batches))]


def _tuned_weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items() if not k.startswith(FROZEN)}


def _train(model, tokenizer, head, train, cuad, valid, cfg: FinetuneConfig, on_best) -> list[dict]:
    """Steps until the epochs, the minutes or the patience run out; the best weights end up loaded."""
    rng = np.random.default_rng(cfg.seed)
    per_epoch = -(-(len(train) + min(cfg.cuad_passages, len(cuad))) // cfg.contexts_per_batch)
    opt, sched = _optimizer(model, head, cfg, cfg.epochs * per_epoch)
    ce, t0, step, log = nn.CrossEntropyLoss(), time.perf_counter(), 0, []
    best, best_state, waited, running, done = -1.0, None, 0, [], False
    for epoch in range(cfg.epochs):
        if done:
            break
        for batch in _epoch_batches(train, cuad, cfg, rng):
            model.train()
            head.train()
            start, end, cls, examples = forward(model, tokenizer, head, batch)
            loss = answer_loss(start, end, cls, examples, ce)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
            opt.step()
            sched.step()
            running.append(loss.item())
            step += 1
            out_of_time = time.perf_counter() - t0 > 60 * cfg.minutes
            if step % cfg.eval_every and not out_of_time:
                continue
            answers, _, _ = read_groups(model, tokenizer, head, valid)
            m = score(answers, [e.item for _, g in valid for e in g])
            row = {"epoch": epoch + 1, "step": step, "loss": round(float(np.mean(running)), 4)}
            row |= {k: m[k] for k in ("em", "f1", "yes_no_acc", "no_answer_acc")}
            row["minutes"] = round((time.perf_counter() - t0) / 60, 1)
            log.append(row)
            print(json.dumps(row), flush=True)
            running = []
            if m["f1"] > best:
                best, waited = m["f1"], 0
                best_state = (_tuned_weights(model), {k: v.clone() for k, v in head.state_dict().items()})
                on_best(best_state[0], row)
            else:
                waited += 1
            if done := out_of_time or waited >= cfg.patience:
                break
    if best_state is not None:
        model.load_state_dict({**model.state_dict(), **best_state[0]})
        head.load_state_dict(best_state[1])
    return log


def calibrate(model, tokenizer, head: ReaderHead, valid: list[Group], qa: Path) -> dict:
    """Fit the answer-type calibration on the validation questions (set on the head); the expected
    calibration error and the answer-type accuracy before and after, on them and on `qa`'s held-apart
    questions (read, not fitted on)."""
    head.cfg.temperature, head.cfg.type_bias = 1.0, (0.0,) * len(LABELS)
    _, logits, gold = read_groups(model, tokenizer, head, valid)
    held_groups = groups_of(build_examples(qa, None, tokenizer, "heldout"), BlockType.FACTS)
    _, raw_held, held_gold = read_groups(model, tokenizer, head, held_groups)
    head.cfg.temperature, head.cfg.type_bias = fit_calibration(logits, gold)

    def measures(raw: torch.Tensor, g: torch.Tensor, calibrated: bool) -> dict:
        z = raw / head.cfg.temperature + torch.tensor(head.cfg.type_bias) if calibrated else raw
        p = torch.softmax(z, -1)
        return {
            "ece": expected_calibration_error(p, g),
            "type_acc": round(float((p.argmax(-1) == g).float().mean()), 4),
        }

    return {
        "temperature": head.cfg.temperature,
        "type_bias": dict(zip(LABELS, head.cfg.type_bias, strict=True)),
        "valid_before": measures(logits, gold, False),
        "valid_after": measures(logits, gold, True),
        "heldout_before": measures(raw_held, held_gold, False),
        "heldout_after": measures(raw_held, held_gold, True),
    }


def finetune_reader(
    qa: Path,
    out: Path = READER_FILE,
    init: Path = READER_FILE,
    checkpoint: str | None = None,
    cuad: Path | None = None,
    cuad_contracts: int = 40,
    cfg: FinetuneConfig | None = None,
) -> dict:
    """Fine-tune `init`'s head with the encoder on `qa`'s training split (and CUAD's training contracts),
    keep the best validation step in `out`, calibrate the answer types, then read the held-apart split."""
    cfg = cfg or FinetuneConfig()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    path = checkpoint_file(checkpoint)
    if path is None or not path.is_file():
        raise ValueError(f"{path or 'data/models/'}: no encoder checkpoint")
    sha = sha256_file(path)
    model, tokenizer = load_encoder(path, "cpu")
    start = load_reader(init, model, tokenizer)  # a fine-tuned reader goes on with its own encoder weights
    model, head = start.model, start.head
    head.cfg.temperature, head.cfg.type_bias = 1.0, (0.0,) * len(LABELS)  # trained raw; calibrate() sets them
    examples = build_examples(qa, None, tokenizer, "train")
    train = groups_of([e for e in examples if not is_validation(e.text)], BlockType.FACTS)
    valid = groups_of([e for e in examples if is_validation(e.text)], BlockType.FACTS)
    contracts = cuad_examples(cuad, None, tokenizer, cuad_contracts) if cuad else []
    cuad_groups = groups_of(contracts, BlockType.CLAUSE)
    record = {
        "train_file": str(qa),
        "cuad": str(cuad) if cuad else None,
        "init": str(init),
        "end_to_end": asdict(cfg),
        "train_questions": sum(len(g) for _, g in train) + len(contracts),
        "valid_questions": sum(len(g) for _, g in valid),
        "encoder": path.name,
        "config": vars(head.cfg),
    }
    print(
        f"{len(train)} training contexts, {len(cuad_groups)} CUAD passages, {len(valid)} validation",
        flush=True,
    )

    def save(tuned: dict, row: dict) -> None:
        Reader(head, model, tokenizer, tuned=tuned).save(out, sha, {**record, "best_step": row})

    t0 = time.perf_counter()
    log = _train(model, tokenizer, head, train, cuad_groups, valid, cfg, save)
    calibration = calibrate(model, tokenizer, head, valid, qa)
    reader = Reader(head, model.eval(), tokenizer, str(out), tuned=_tuned_weights(model))
    metrics = {
        **record,
        "config": vars(head.cfg),
        "train_log": log,
        "calibration": calibration,
        "heldout": evaluate_qa(qa, reader, "heldout"),
        "train_s": round(time.perf_counter() - t0, 1),
    }
    reader.save(out, sha, metrics)
    return metrics
