"""The reader: an extractive head on the encoder's states (a span, or YES / NO / no answer).

The context is encoded once, as a document's segments with memory, and the question alone. A small LM
cannot answer from one pooled question vector, so the head gets what DrQA gave its reader: per context
token, its encoder state, lexical match flags with the question (same token, word form, jieba word /
English stem, shared characters, closeness to a matched word) and an attention summary of the question
tokens; a 1-layer BiGRU over the context scores span starts and ends against an attention-pooled question
vector, and the answer type comes from pooled context and question features. The context states do not
depend on the question: a document read once serves every later question on it (`ask`'s session cache).
A head trained on the frozen encoder (`train.py`) runs on its states; one fine-tuned with the encoder's
layers (`finetune.py`) carries them and reads with a copy of the encoder that has them (`Reader.attach`).
"""

from __future__ import annotations

import copy
import io
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pipeline.errors import DocumentError
from pipeline.paths import MODELS_DIR
from pipeline.records import BLOCK_TYPE_IDS, BlockType, sha256_file
from pipeline.store import atomic_write_bytes
from retrieval.reader.polar import PolarHead
from retrieval.reader.questions import LABELS, POLAR_TYPES, answer_types, question_parts
from retrieval.text import HAN, QUESTION_WORDS, WORD_RUNS, jieba_module, span_chars, stemmer, stopwords

READER_FILE = MODELS_DIR / "reader.pt"  # the shipped head
# Reader sha256 -> the margin `decode` adds to log P(no answer) unless YES/NO may answer (a wrong span scores
# little F1): the best F1 on the CJRC validation contexts (`benchmarks/none_margin.py`). Unlisted: 0.
NONE_MARGINS = {
    "9e87fb5af1b478fe3cba81ebd928ac6f4144c5d69a2776ef16b4d43950556979": 1.0,  # end to end, sitting 2
    "c0d6391ba8cf0323e74a5abd42d2c50c4b3646574f42ced76a0f666c01caeae5": 1.0,  # sitting 4 (shipped)
}

MAX_ANSWER_TOKENS = 40
LEXICAL = ("same_token", "same_form", "same_term", "cjk_char_share", "near_term")
_NEAR_SCALE = 8.0  # tokens: closeness to the nearest matched question term decays as exp(-distance / 8)


class ReaderMismatch(DocumentError):
    """A reader head that does not fit the encoder it is asked to read with."""

    stage = "reader"


@dataclass
class EncodedText:
    hidden: torch.Tensor  # [T, d] states of the text's own tokens (prefix tokens dropped)
    offsets: list[tuple[int, int]]  # character span of each token in the text
    ids: list[int]  # token ids


@dataclass
class Question:
    text: str
    enc: EncodedText
    ids: frozenset[int]
    forms: frozenset[str]  # lower-cased token strings
    terms: frozenset[str]  # jieba words / English stems, stopwords dropped
    chars: frozenset[str]  # CJK characters
    types: frozenset[str] = frozenset(LABELS)  # the answer types its form allows (answer_types)
    parts: tuple[Question, ...] = ()  # a question asking several things at once: each (question_parts)


@lru_cache(maxsize=512)  # every question on a context matches against the same context terms
def term_spans(text: str) -> tuple[tuple[str, int, int], ...]:
    """(term, start, end) of the text's BM25 terms (retrieval.text.terms, with their positions)."""
    stop = stopwords()
    out: list[tuple[str, int, int]] = []
    for m in WORD_RUNS.finditer(text):
        run, base = m.group(), m.start()
        if HAN.match(run):
            out.extend(
                (w, base + a, base + b)
                for w, a, b in jieba_module().tokenize(run, mode="search")
                if w not in stop
            )
        elif (w := run.lower()) not in stop:
            out.append((stemmer().stemWord(w), m.start(), m.end()))
    return tuple(out)


def content_terms(question: str) -> set[str]:
    """The question's terms less its asking words, auxiliaries and pronouns (retrieval.text.QUESTION_WORDS),
    which any sentence may hold."""
    return {t for t, _, _ in term_spans(question)} - QUESTION_WORDS


def _form(text: str) -> str:
    return text.strip().lower()


def tokenize(tokenizer, text: str) -> EncodedText:
    """A text's token ids and character spans, with no states yet (hidden is [T, 0])."""
    enc = tokenizer.hf.encode(text, add_special_tokens=False)
    return EncodedText(torch.empty(len(enc.ids), 0), [tuple(o) for o in enc.offsets], list(enc.ids))


def encode_states(
    model, tokenizer, texts: list[list[int]], block_type: BlockType = BlockType.FACTS, seg_tokens: int = 384
) -> list[torch.Tensor]:
    """Token states of several texts (their token ids), each read as consecutive segments with recurrence
    memory, all texts in one batch; differentiable when autograd is on. -> one [T_i, d] per text."""
    step = seg_tokens - 2
    dev = next(model.parameters()).device
    kind = BLOCK_TYPE_IDS[BlockType(block_type)]
    pieces: list[list[torch.Tensor]] = [[] for _ in texts]
    memory = None
    for i in range(max([-(-len(ids) // step) for ids in texts] + [1])):
        prefix = tokenizer.prefix_ids(block_type, i == 0)
        chunks = [ids[i * step : (i + 1) * step] for ids in texts]
        x = torch.zeros(len(texts), len(prefix) + max(len(c) for c in chunks), dtype=torch.long)  # [B, T]
        for b, c in enumerate(chunks):
            x[b, : len(prefix) + len(c)] = torch.tensor(prefix + c)
        # a text ends in its last segment, padded on the right: causal attention keeps its states exact, and
        # the memory the padding leaves is never read (a text that goes on fills every segment before)
        out = model(x.to(dev), memory, block_types=torch.full_like(x, kind).to(dev))
        memory = out.memory
        for b, c in enumerate(chunks):
            if c:
                pieces[b].append(out.hidden[b, len(prefix) : len(prefix) + len(c)])
    return [torch.cat(p) if p else torch.zeros(0, model.cfg.d_model, device=dev) for p in pieces]


@torch.no_grad()
def encode_text(
    model, tokenizer, text: str, block_type: BlockType = BlockType.FACTS, seg_tokens: int = 384
) -> EncodedText:
    """A context as consecutive segments with recurrence memory; states of every text token."""
    enc = tokenize(tokenizer, text)
    enc.hidden = encode_states(model, tokenizer, [enc.ids], block_type, seg_tokens)[0].float().cpu()
    return enc


def question_of(question: str, enc: EncodedText) -> Question:
    """A question's lexical sets (what the features match against) beside its tokens or states."""
    forms = frozenset(_form(question[a:b]) for a, b in enc.offsets) - {""}
    return Question(
        question,
        enc,
        frozenset(enc.ids),
        forms,
        frozenset(t for t, _, _ in term_spans(question)),
        frozenset(HAN.findall(question)),
        answer_types(question),
    )


def prepare_question(model, tokenizer, question: str) -> Question:
    """The question encoded alone (per-token states) and its lexical sets; for a question asking several
    things at once, each of its parts prepared alike."""
    q = question_of(question, encode_text(model, tokenizer, question, BlockType.OTHER))
    q.parts = tuple(prepare_question(model, tokenizer, p) for p in question_parts(question))
    return q


def lexical_features(text: str, ctx: EncodedText, q: Question) -> torch.Tensor:
    """[T, len(LEXICAL)] match features of each context token with the question."""
    t = len(ctx.offsets)
    feats = np.zeros((t, len(LEXICAL)), dtype=np.float32)
    if t == 0:
        return torch.from_numpy(feats)
    matched = np.zeros(len(text) + 1, dtype=np.int32)  # chars inside a context term the question shares
    for term, a, b in term_spans(text):
        if term in q.terms:
            matched[a:b] = 1
    cum = np.concatenate([[0], np.cumsum(matched)])
    for i, ((a, b), tid) in enumerate(zip(ctx.offsets, ctx.ids, strict=True)):
        piece = text[a:b]
        cjk = HAN.findall(piece)
        feats[i, 0] = tid in q.ids
        feats[i, 1] = _form(piece) in q.forms
        feats[i, 2] = cum[b] > cum[a]
        feats[i, 3] = sum(c in q.chars for c in cjk) / len(cjk) if cjk else 0.0
    hits = np.flatnonzero(feats[:, 2])
    if hits.size:
        pos = np.arange(t)
        right = np.clip(np.searchsorted(hits, pos), 0, hits.size - 1)
        left = np.clip(right - 1, 0, hits.size - 1)
        dist = np.minimum(np.abs(hits[right] - pos), np.abs(hits[left] - pos))
        feats[:, 4] = np.exp(-dist / _NEAR_SCALE)
    return torch.from_numpy(feats)


@dataclass
class ReaderConfig:
    d_model: int  # the encoder's state size
    d: int = 64  # projected state size
    hidden: int = 64  # BiGRU size per direction
    dropout: float = 0.2
    # answer-type calibration fitted on validation data: logits / temperature + type_bias
    temperature: float = 1.0
    type_bias: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)


def _masked_softmax(x: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.softmax(x.masked_fill(~mask, torch.finfo(x.dtype).min), dim)


class ReaderHead(nn.Module):
    def __init__(self, cfg: ReaderConfig):
        super().__init__()
        self.cfg = cfg
        d, h = cfg.d, cfg.hidden
        self.proj = nn.Sequential(nn.Linear(cfg.d_model, d), nn.ReLU())  # shared by context and question
        self.q_pool = nn.Linear(d, 1)
        self.drop = nn.Dropout(cfg.dropout)
        self.rnn = nn.GRU(3 * d + len(LEXICAL), h, batch_first=True, bidirectional=True)
        self.q_start = nn.Linear(d, 2 * h)
        self.q_end = nn.Linear(d, 2 * h)
        self.cls = nn.Sequential(nn.Linear(6 * h + d, h), nn.Tanh(), nn.Linear(h, len(LABELS)))

    def forward(
        self, c: torch.Tensor, c_mask: torch.Tensor, lex: torch.Tensor, q: torch.Tensor, q_mask: torch.Tensor
    ):
        """c [B, T, D] context states, c_mask [B, T], lex [B, T, F], q [B, Q, D] question states, q_mask [B, Q]
        -> (start [B, T], end [B, T], answer-type logits [B, 4]); masked tokens score the dtype's minimum."""
        pc, pq = self.proj(c), self.proj(q)
        align = _masked_softmax(pc @ pq.transpose(1, 2), q_mask[:, None, :]) @ pq  # [B, T, d]
        x = self.drop(torch.cat([pc, align, pc * align, lex], -1))
        # Unpacked: a packed GRU's backward pass is twice as slow on CPU; training batches group contexts
        # of similar length, so the few padding steps the backward direction reads first matter little.
        g = self.drop(self.rnn(x)[0])
        qv = (_masked_softmax(self.q_pool(pq).squeeze(-1), q_mask)[..., None] * pq).sum(1)  # [B, d]
        neg = torch.finfo(g.dtype).min
        start = torch.einsum("btk,bk->bt", g, self.q_start(qv)).masked_fill(~c_mask, neg)
        end = torch.einsum("btk,bk->bt", g, self.q_end(qv)).masked_fill(~c_mask, neg)
        m = c_mask[..., None].to(g.dtype)
        mean = (g * m).sum(1) / m.sum(1).clamp(min=1)
        mx = g.masked_fill(~c_mask[..., None], neg).max(1).values
        at_start = (torch.softmax(start, -1)[..., None] * g).sum(1)  # the evidence where a span would start
        logits = self.cls(torch.cat([mean, mx, at_start, qv], -1))
        return (
            start,
            end,
            logits / self.cfg.temperature
            + torch.tensor(self.cfg.type_bias, dtype=logits.dtype, device=logits.device),
        )


def best_span(
    start: torch.Tensor, end: torch.Tensor, max_len: int = MAX_ANSWER_TOKENS
) -> tuple[int, int, float]:
    """The (s, e) with s ≤ e < s + max_len maximising start[s] + end[e] (log-probabilities or logits)."""
    t = start.numel()
    scores = start[:, None] + end[None, :]
    band = torch.ones(t, t, dtype=torch.bool).triu().tril(max_len - 1)
    scores = scores.masked_fill(~band, float("-inf"))
    flat = int(torch.argmax(scores))
    return flat // t, flat % t, float(scores.view(-1)[flat])


def batch_inputs(items: list[tuple[EncodedText, torch.Tensor, Question]]) -> tuple[torch.Tensor, ...]:
    """Pad (context states, lexical features, question) triples into the head's inputs."""
    d = items[0][0].hidden.size(1)
    t = max(max(len(c.ids) for c, _, _ in items), 1)
    n_q = max(max(len(q.enc.ids) for _, _, q in items), 1)
    b = len(items)
    c, lex = torch.zeros(b, t, d), torch.zeros(b, t, len(LEXICAL))
    q = torch.zeros(b, n_q, d)
    c_mask, q_mask = torch.zeros(b, t, dtype=torch.bool), torch.zeros(b, n_q, dtype=torch.bool)
    for i, (ctx, f, qu) in enumerate(items):
        n, m = len(ctx.ids), len(qu.enc.ids)
        c[i, :n], lex[i, :n], c_mask[i, :n] = ctx.hidden.float(), f, True
        q[i, :m], q_mask[i, :m] = qu.enc.hidden.float(), True
    return c, c_mask, lex, q, q_mask


@dataclass
class ReaderAnswer:
    label: str  # one of LABELS
    answer: str  # the span text, "YES", "NO" or "" (no answer)
    confidence: float  # P(label), times the span's start and end probabilities for a span
    span: tuple[int, int] | None  # token span in the context
    type_prob: float  # P(label) alone: comparable across passages whatever their answer types
    best_span: tuple[str, float] = ("", 0.0)  # the best span and P(SPAN)·p(start)·p(end), whatever the label
    parts: tuple[str, ...] = ()  # the spans answering a question's parts, when it was read in parts


def joined(answers: list[ReaderAnswer]) -> ReaderAnswer:
    """One answer from those to a question's parts: their spans in order (a text said twice, once), over
    the tokens from the first to the last, as sure as the least sure of them; the surest answer when no
    part is answered with a span."""
    said = [a for a in answers if a.label == "SPAN"]
    if not said:
        return max(answers, key=lambda a: a.type_prob)
    texts = tuple(dict.fromkeys(a.answer for a in said))
    confidence = min(a.confidence for a in said)
    hull = (min(a.span[0] for a in said), max(a.span[1] for a in said))
    text = "，".join(texts)
    return ReaderAnswer(
        "SPAN", text, confidence, hull, min(a.type_prob for a in said), (text, confidence), texts
    )


def decode(
    text: str,
    ctx: EncodedText,
    start: torch.Tensor,
    end: torch.Tensor,
    logits: torch.Tensor,
    types: frozenset[str] = frozenset(LABELS),
    none_margin: float = 0.0,
) -> ReaderAnswer:
    """One question's head outputs (unpadded) -> its prediction, among the answer `types` allowed. For a
    question that cannot be answered yes or no, `none_margin` is added to log P(no answer) before the type
    is chosen; the probabilities reported stay the calibrated ones."""
    allowed = torch.tensor([label in types for label in LABELS])
    choice = torch.log_softmax(logits.float().masked_fill(~allowed, float("-inf")), -1)
    probs = choice.exp()
    if "YES" not in types:
        choice[LABELS.index("NONE")] += none_margin
    k = int(choice.argmax())
    label = LABELS[k]
    s, e, logp = best_span(torch.log_softmax(start.float(), -1), torch.log_softmax(end.float(), -1))
    a, b = span_chars(text, ctx.offsets, (s, e))  # "人民币172|,000元" ends whole
    candidate = (text[a:b], float(probs[0]) * float(np.exp(logp)))
    if label != "SPAN":
        return ReaderAnswer(
            label, "" if label == "NONE" else label, float(probs[k]), None, float(probs[k]), candidate
        )
    return ReaderAnswer(label, candidate[0], candidate[1], (s, e), float(probs[0]), candidate)


@dataclass
class Reader:
    head: ReaderHead
    model: object
    tokenizer: object
    checkpoint: str | None = None
    encoder_sha256: str | None = None
    metrics: dict | None = None
    tuned: dict[str, torch.Tensor] | None = None  # encoder weights fine-tuned with the head, by name
    polar: PolarHead | None = None  # decides YES / NO / none for yes-no questions (retrieval.reader.polar)
    none_margin: float = 0.0  # `decode`'s margin for no answer (NONE_MARGINS of the shipped reader)

    def attach(self, model, tokenizer) -> Reader:
        """Read with `model`: as it is for a head trained on frozen states, else a copy of it carrying the
        weights fine-tuned with the head (the encoder given keeps serving the index and search)."""
        if self.tuned and model is not None:
            model = copy.deepcopy(model)
            missing = set(self.tuned) - set(model.state_dict())
            if missing:
                raise ReaderMismatch(
                    str(self.checkpoint), f"tuned weights the encoder lacks: {sorted(missing)[:3]}"
                )
            model.load_state_dict({**model.state_dict(), **self.tuned})
            model.eval()
        self.model, self.tokenizer = model, tokenizer
        return self

    def question(self, text: str) -> Question:
        return prepare_question(self.model, self.tokenizer, text)

    @torch.no_grad()
    def read_many(self, text: str, ctx: EncodedText, questions: list[Question]) -> list[ReaderAnswer]:
        """Every question against one encoded context, in one batch."""
        if not ctx.ids:
            return [ReaderAnswer("NONE", "", 0.0, None, 0.0) for _ in questions]
        asked = [p for q in questions for p in (q.parts or (q,))]  # a question in parts: each part
        start, end, cls = self.decided_outputs(text, ctx, asked)
        said = [
            decode(text, ctx, start[i], end[i], cls[i], q.types, self.none_margin)
            for i, q in enumerate(asked)
        ]
        answers = iter(said)
        return [joined([next(answers) for _ in q.parts]) if q.parts else next(answers) for q in questions]

    @torch.no_grad()
    def decided_outputs(
        self, text: str, ctx: EncodedText, questions: list[Question]
    ) -> tuple[torch.Tensor, ...]:
        """`head_outputs` with the yes-no decider's YES / NO / none in place of the head's for yes-no
        questions: what `decode` chooses from."""
        start, end, cls = self.head_outputs(text, ctx, questions)
        for i, q in enumerate(questions):
            if self.polar is not None and q.types == POLAR_TYPES:
                yes_no_none = self.polar.log_probs(q.text, text, cls[i, 1:].tolist())
                cls[i, 1:] = torch.from_numpy(yes_no_none).to(cls.dtype)
        return start, end, cls

    @torch.no_grad()
    def head_outputs(
        self, text: str, ctx: EncodedText, questions: list[Question]
    ) -> tuple[torch.Tensor, ...]:
        """The head's start [Q, T], end [Q, T] and answer-type [Q, 4] logits, before any decision."""
        lex = [lexical_features(text, ctx, q) for q in questions]
        return self.head(*batch_inputs([(ctx, f, q) for f, q in zip(lex, questions, strict=True)]))

    def read(self, text: str, ctx: EncodedText, question: Question) -> ReaderAnswer:
        return self.read_many(text, ctx, [question])[0]

    def save(self, path: Path, encoder_sha256: str, metrics: dict) -> None:
        """fp16 on disk; a fine-tuned reader stores the encoder weights it changed, not the whole encoder."""
        buf = io.BytesIO()
        blob = {
            "config": asdict(self.head.cfg),
            "state_dict": {k: v.half() for k, v in self.head.state_dict().items()},
            "encoder_sha256": encoder_sha256,
            "metrics": metrics,
        }
        if self.tuned:
            blob["encoder_tuned"] = {k: v.detach().half().cpu() for k, v in self.tuned.items()}
        torch.save(blob, buf)
        atomic_write_bytes(Path(path), buf.getvalue())


def load_reader(path: Path, model, tokenizer, encoder_sha256: str | None = None) -> Reader:
    """The head at `path`; with `encoder_sha256`, a head trained on another encoder is refused."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
        cfg = ReaderConfig(**blob["config"])
    except (KeyError, TypeError, RuntimeError, EOFError) as e:
        raise ReaderMismatch(
            str(path), f"not a reader checkpoint of this version ({type(e).__name__}: {e})"
        ) from None
    trained_on = blob.get("encoder_sha256")
    if encoder_sha256 is not None and trained_on != encoder_sha256:
        raise ReaderMismatch(
            str(path),
            f"trained on encoder {str(trained_on)[:12]}, not on {encoder_sha256[:12]}; "
            "retrain it with `ldx train reader`",
        )
    if model is not None and model.cfg.d_model != cfg.d_model:
        raise ReaderMismatch(
            str(path), f"made for d_model {cfg.d_model}, the encoder has {model.cfg.d_model}"
        )
    head = ReaderHead(cfg)
    head.load_state_dict({k: v.float() for k, v in blob["state_dict"].items()})
    tuned = {k: v.float() for k, v in blob.get("encoder_tuned", {}).items()} or None
    sha = sha256_file(path)
    reader = Reader(
        head.eval(),
        None,
        None,
        str(path),
        trained_on,
        blob.get("metrics"),
        tuned,
        PolarHead.beside(path, sha),
        NONE_MARGINS.get(sha, 0.0),
    )
    return reader.attach(model, tokenizer)
