"""The reader: an extractive head on the encoder's states (start/end of a span, or YES / NO / no answer).

The context is encoded once, as a document's segments with memory, and the question alone; the head
scores each context token against the question vector (bilinear start and end scores) and classifies
the answer type from the question and the pooled context. Because the context states do not depend on
the question, a document read once serves every later question on it (the session cache in `ask`).
The encoder stays frozen: the head trains on cached states, which is what a CPU can afford.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pipeline.records import BlockType, Segment

LABELS = ("SPAN", "YES", "NO", "NONE")
MAX_ANSWER_TOKENS = 40


class ReaderHead(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self.q_start = nn.Linear(d_model, d_model)
        self.q_end = nn.Linear(d_model, d_model)
        self.cls = nn.Sequential(nn.Linear(3 * d_model, d_model), nn.Tanh(), nn.Linear(d_model, len(LABELS)))

    def forward(self, h: torch.Tensor, mask: torch.Tensor, q: torch.Tensor):
        """h [B, T, d] context states, mask [B, T] real tokens, q [B, d] question vector ->
        (start [B, T], end [B, T], answer-type logits [B, 4])."""
        scale = self.d_model**-0.5
        start = torch.einsum("btd,bd->bt", h, self.q_start(q)) * scale
        end = torch.einsum("btd,bd->bt", h, self.q_end(q)) * scale
        neg = torch.finfo(h.dtype).min
        start, end = start.masked_fill(~mask, neg), end.masked_fill(~mask, neg)
        m = mask[..., None].to(h.dtype)
        mean = (h * m).sum(1) / m.sum(1).clamp(min=1)
        mx = h.masked_fill(~mask[..., None], neg).max(1).values
        return start, end, self.cls(torch.cat([q, mean, mx], -1))


@dataclass
class EncodedText:
    hidden: torch.Tensor  # [T, d] states of the text's own tokens (prefix tokens dropped)
    offsets: list[tuple[int, int]]  # character span of each token in the text


@torch.no_grad()
def encode_text(model, tokenizer, text: str, block_type: BlockType = BlockType.FACTS, seg_tokens: int = 384) -> EncodedText:
    """A context as consecutive segments with recurrence memory; states of every text token."""
    from retrieval.inject import encode_document

    enc = tokenizer.hf.encode(text, add_special_tokens=False)
    ids, offsets = list(enc.ids), list(enc.offsets)
    if not ids:
        return EncodedText(torch.zeros(0, model.cfg.d_model), [])
    segs, seg_ids, n_prefix = [], [], []
    for i, start in enumerate(range(0, len(ids), seg_tokens - 2)):
        chunk = ids[start : start + seg_tokens - 2]
        a, b = offsets[start][0], offsets[min(start + len(chunk), len(ids)) - 1][1]
        seg = Segment("ctx", i, 0, block_type, text[a:b], len(chunk), a, b)
        prefix = tokenizer.prefix_ids(block_type, i == 0)
        segs.append(seg)
        seg_ids.append(prefix + chunk)
        n_prefix.append(len(prefix))
    out = encode_document(model, segs, seg_ids)
    hidden = torch.cat([e.hidden[p:] for e, p in zip(out, n_prefix, strict=True)]).float().cpu()
    return EncodedText(hidden, offsets)


@torch.no_grad()
def question_vector(model, tokenizer, question: str) -> torch.Tensor:
    from retrieval.encoder import encode_query

    return torch.from_numpy(encode_query(model, tokenizer, question))


def best_span(start: torch.Tensor, end: torch.Tensor, max_len: int = MAX_ANSWER_TOKENS) -> tuple[int, int, float]:
    """The (s, e) with s ≤ e < s + max_len maximising start[s] + end[e]."""
    t = start.numel()
    scores = start[:, None] + end[None, :]
    band = torch.ones(t, t, dtype=torch.bool).triu().tril(max_len - 1)
    scores = scores.masked_fill(~band, float("-inf"))
    flat = int(torch.argmax(scores))
    return flat // t, flat % t, float(scores.view(-1)[flat])


@dataclass
class Reader:
    head: ReaderHead
    model: object
    tokenizer: object
    checkpoint: str | None = None
    encoder_sha256: str | None = None

    @torch.no_grad()
    def read(self, ctx: EncodedText, q: torch.Tensor, text: str) -> tuple[str, float]:
        """(answer, confidence): a span of `text`, "YES", "NO" or "" (no answer)."""
        if not ctx.offsets:
            return "", 0.0
        mask = torch.ones(1, len(ctx.offsets), dtype=torch.bool)
        start, end, cls = self.head(ctx.hidden[None], mask, q[None].float())
        probs = torch.softmax(cls[0], -1)
        label = LABELS[int(probs.argmax())]
        if label == "YES" or label == "NO":
            return label, float(probs.max())
        if label == "NONE":
            return "", float(probs.max())
        s, e, _ = best_span(start[0], end[0])
        return text[ctx.offsets[s][0] : ctx.offsets[e][1]], float(probs[0])

    def save(self, path: Path, encoder_sha256: str, metrics: dict) -> None:
        import io

        from pipeline.store import atomic_write_bytes

        buf = io.BytesIO()
        torch.save({"d_model": self.head.d_model, "state_dict": self.head.state_dict(),
                    "encoder_sha256": encoder_sha256, "metrics": metrics}, buf)
        atomic_write_bytes(Path(path), buf.getvalue())


def load_reader(path: Path, model, tokenizer) -> Reader:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    head = ReaderHead(blob["d_model"])
    head.load_state_dict(blob["state_dict"])
    return Reader(head.eval(), model, tokenizer, str(path), blob.get("encoder_sha256"))


def answer_label(answers: list[dict], impossible: bool) -> tuple[str, str]:
    """(label, first gold text) of a SQuAD-2.0/CJRC question."""
    texts = [a["text"] for a in answers]
    if impossible or not texts or not texts[0]:
        return "NONE", ""
    if texts[0] in ("YES", "NO"):
        return texts[0], texts[0]
    return "SPAN", texts[0]


def char_to_token_span(offsets: list[tuple[int, int]], a: int, b: int) -> tuple[int, int] | None:
    """Tokens covering characters [a, b); None when the span falls outside the encoded text."""
    s = next((i for i, (x, y) in enumerate(offsets) if y > a), None)
    e = next((i for i in range(len(offsets) - 1, -1, -1) if offsets[i][0] < b), None)
    if s is None or e is None or e < s:
        return None
    return s, e


def train_head(
    examples: list[tuple[EncodedText, torch.Tensor, str, tuple[int, int] | None]],
    d_model: int,
    epochs: int = 8,
    lr: float = 2e-3,
    batch_size: int = 32,
    seed: int = 0,
) -> ReaderHead:
    """Train the head on (context states, question vector, label, token span) examples."""
    torch.manual_seed(seed)
    head = ReaderHead(d_model)
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.01)
    rng = np.random.default_rng(seed)
    ce = nn.CrossEntropyLoss()
    for _ in range(epochs):
        order = rng.permutation(len(examples))
        for i in range(0, len(order), batch_size):
            batch = [examples[j] for j in order[i : i + batch_size]]
            t = max(len(c.offsets) for c, _, _, _ in batch)
            h = torch.zeros(len(batch), t, d_model)
            mask = torch.zeros(len(batch), t, dtype=torch.bool)
            for b, (c, _, _, _) in enumerate(batch):
                h[b, : len(c.offsets)] = c.hidden
                mask[b, : len(c.offsets)] = True
            q = torch.stack([x[1] for x in batch]).float()
            labels = torch.tensor([LABELS.index(x[2]) for x in batch])
            start, end, cls = head(h, mask, q)
            loss = ce(cls, labels)
            spans = [(b, x[3]) for b, x in enumerate(batch) if x[2] == "SPAN" and x[3] is not None]
            if spans:
                rows = torch.tensor([b for b, _ in spans])
                loss = loss + 0.5 * (ce(start[rows], torch.tensor([s for _, (s, _) in spans]))
                                     + ce(end[rows], torch.tensor([e for _, (_, e) in spans])))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return head.eval()
