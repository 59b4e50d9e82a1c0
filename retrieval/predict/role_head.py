"""The block-role head: the role of each segment from its text and its context, read by a dual-tower
network (one tower the segment, the other its memory). The text view is the hashed TF-IDF of
retrieval/predict/tfidf.py; the towers can read a Transformer-XL instead or as well (`txl_views`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

from pipeline.records import BlockType
from retrieval.predict.role_context import N_CUES, cue_features, fit_transitions, viterbi
from retrieval.predict.tfidf import HashedTfidf, load_npz, save_npz

# ---- block roles -----------------------------------------------------------------------------------

ROLE_LABELS: list[BlockType] = [
    BlockType.HEADER,
    BlockType.PARTIES,
    BlockType.PROCEDURE,
    BlockType.CLAIMS,
    BlockType.DEFENSE,
    BlockType.FACTS,
    BlockType.OPINION,
    BlockType.VERDICT,
    BlockType.NOTICE,
    BlockType.SIGNATURE,
    BlockType.APPENDIX,
    BlockType.OTHER,
]
N_POSITION = 4  # relative position, first unit, last unit, log length
TOWERS = ("text", "txl", "both")  # what the two towers read


class DualTower(nn.Module):
    """One tower reads the current segment, the other its memory (what came before it, and where in the
    document it sits); the towers meet only before the classification head. With `sequence`, a
    bidirectional GRU also reads the current tower's outputs across each whole document, so a unit's
    class sees its neighbours' content in both directions (forward then needs the documents' sizes)."""

    def __init__(
        self,
        d_current: int,
        d_memory: int,
        d_hidden: int,
        n_classes: int,
        dropout: float = 0.1,
        sequence: bool = False,
    ):
        super().__init__()
        self.current = nn.Sequential(nn.Linear(d_current, d_hidden), nn.GELU(), nn.LayerNorm(d_hidden))
        self.memory = nn.Sequential(nn.Linear(d_memory, d_hidden), nn.GELU(), nn.LayerNorm(d_hidden))
        self.across = (
            nn.GRU(d_hidden, d_hidden // 2, batch_first=True, bidirectional=True) if sequence else None
        )
        d_joint = (3 + sequence) * d_hidden
        self.head = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(d_joint, d_hidden), nn.GELU(), nn.Linear(d_hidden, n_classes)
        )

    def forward(
        self, current: torch.Tensor, memory: torch.Tensor, sizes: list[int] | None = None
    ) -> torch.Tensor:
        a, b = self.current(current), self.memory(memory)
        joint = [a, b, a * b]
        if self.across is not None:
            docs = [d for d in torch.split(a, sizes) if len(d)]  # an empty document adds no rows
            out, _ = pad_packed_sequence(self.across(pack_sequence(docs, enforce_sorted=False))[0], True)
            joint.append(torch.cat([out[i, : len(d)] for i, d in enumerate(docs)]))
        return self.head(torch.cat(joint, -1))


def _decayed_past(x: np.ndarray, decay: float) -> np.ndarray:
    """Per row: the decayed mean of the rows before it (zeros for the first); nearer rows weigh more."""
    out = np.zeros_like(x)
    acc, weight = np.zeros(x.shape[1], dtype=np.float32), 0.0
    for i in range(x.shape[0]):
        if weight:
            out[i] = acc / weight
        acc = acc * decay + x[i]
        weight = weight * decay + 1
    return out


def _decayed_future(x: np.ndarray, decay: float) -> np.ndarray:
    """Per row: the decayed mean of the rows after it (zeros for the last)."""
    return _decayed_past(x[::-1], decay)[::-1]


def position_features(n: int) -> np.ndarray:
    pos = np.zeros((n, N_POSITION), dtype=np.float32)
    pos[:, 0] = np.arange(n) / max(1, n - 1)
    pos[0, 1] = 1
    pos[-1, 2] = 1
    pos[:, 3] = np.log1p(n) / 6
    return pos


def _unit_norm(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def txl_views(
    keys: np.ndarray, hidden: list[np.ndarray], mem_len: int, decay: float
) -> tuple[np.ndarray, np.ndarray]:
    """The Transformer-XL's two views of each unit of one document, encoded in reading order.

    current: the unit's key (its pooled last-layer states), [n, d].
    memory: [n, 2d] — the mean of the last `mem_len` token states before the unit (what the model holds
    in memory when it reads the unit), then the decayed mean of all earlier keys (what has left memory).
    """
    n, d = keys.shape
    lengths = np.array([h.shape[0] for h in hidden], dtype=int)
    tokens = np.concatenate(hidden).astype(np.float64) if n else np.zeros((0, d))
    csum = np.concatenate([np.zeros((1, d)), np.cumsum(tokens, 0)])
    starts = np.cumsum(lengths) - lengths
    lo = np.maximum(0, starts - mem_len)
    span = np.maximum(starts - lo, 1)[:, None]
    in_memory = np.where((starts > 0)[:, None], _unit_norm((csum[starts] - csum[lo]) / span), 0).astype(
        np.float32
    )
    return keys.astype(np.float32), np.concatenate(
        [in_memory, _decayed_past(keys.astype(np.float32), decay)], 1
    )


TxlStates = list[tuple[np.ndarray, np.ndarray]]  # per document: txl_views(...) of its units


@dataclass
class RoleHead:
    """Block role of each unit (segment, paragraph or sentence) of a document, from its text and context.

    `towers` says what the two towers read: "text" (hashed TF-IDF of the unit; the decayed mean of the
    earlier units), "txl" (txl_views of a Transformer-XL encoding the document blind, i.e. with every
    block-type tag OTHER so the rule types cannot leak in) or "both" (the two side by side). Heads that
    read the encoder are bound to it: `encoder` names the checkpoint (file and sha256) they were trained on.
    """

    features: HashedTfidf = field(default_factory=lambda: HashedTfidf(1 << 13, (1, 3)))
    d_hidden: int = 48
    decay: float = 0.7
    towers: str = "text"
    members: int = 3  # dual towers trained from different seeds, probabilities averaged
    nets: list[DualTower] = field(default_factory=list)
    trained_on: list[str] = field(default_factory=list)  # doc ids of the training documents
    encoder: dict[str, str] = field(default_factory=dict)  # {"file", "sha256"} of the LM behind "txl"
    d_txl: int = 0
    # what the text view adds to the character n-grams (0 / False: as the heads before them read)
    word_features: int = 0  # hashed word 1-2-grams (English words are spaced; "AIR" is not "air")
    cues: bool = False  # role_context.CUES counts
    future: bool = False  # the memory tower also reads the decayed mean of the units after this one
    sequence: bool = False  # a BiGRU reads the current tower across the document (DualTower)
    class_power: float = 0.5  # class weights (n / count) ** class_power
    # Viterbi decoding over each document with the training documents' role transitions, at this weight
    # (0: every unit its own argmax)
    smoothing: float = 0.0
    transitions: np.ndarray | None = None  # [roles, roles] log P(next | previous)
    # decoding divides the probabilities by the training roles' frequencies to this power (0: off): a
    # rare role is then chosen on less evidence, trading its precision for recall
    debias: float = 0.0
    log_prior: np.ndarray | None = None  # [roles] log training frequency (0 for a role never seen)
    words: HashedTfidf | None = None

    @property
    def reads_text(self) -> bool:
        return self.towers in ("text", "both")

    @property
    def reads_txl(self) -> bool:
        return self.towers in ("txl", "both")

    def _views(
        self, docs: list[list[str]], states: TxlStates | None
    ) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
        sizes = [len(d) for d in docs]
        cur, mem = [], []
        if self.reads_text:
            x = self._text_view([t for d in docs for t in d])
            cur.append(x)
            mem.append(self._context(np.split(x, np.cumsum(sizes)[:-1])))
        if self.reads_txl:
            if states is None or [len(c) for c, _ in states] != sizes:
                raise ValueError(f"a {self.towers!r} role head needs the encoder's states of every unit")
            cur.append(np.concatenate([c for c, _ in states]))
            mem.append(np.concatenate([m for _, m in states]))
            if self.future:
                mem.append(np.concatenate([_decayed_future(c, self.decay) for c, _ in states]))
        mem.append(np.concatenate([position_features(n) for n in sizes]))
        return (
            torch.from_numpy(np.concatenate(cur, 1).astype(np.float32)),
            torch.from_numpy(np.concatenate(mem, 1).astype(np.float32)),
            sizes,
        )

    def _text_view(self, texts: list[str]) -> np.ndarray:
        x = [self.features.transform(texts).toarray()]
        if self.word_features:
            x.append(self.words.transform(texts).toarray())
        if self.cues:
            x.append(cue_features(texts))
        return np.concatenate(x, 1)

    def _context(self, parts: list[np.ndarray]) -> np.ndarray:
        """Each document's text views -> what came before each unit (and, with `future`, after it)."""
        past = np.concatenate([_decayed_past(p, self.decay) for p in parts])
        if not self.future:
            return past
        return np.concatenate([past, np.concatenate([_decayed_future(p, self.decay) for p in parts])], 1)

    def _dims(self) -> tuple[int, int]:
        text = (self.features.n_features + self.word_features + N_CUES * self.cues) * self.reads_text
        txl = self.d_txl if self.reads_txl else 0
        sides = 2 if self.future else 1
        return text + txl, sides * text + (1 + sides) * txl + N_POSITION

    def fit(
        self,
        docs: list[list[str]],
        labels: list[list[BlockType]],
        epochs: int = 8,
        seed: int = 0,
        doc_ids: list[str] | None = None,
        states: TxlStates | None = None,
    ) -> RoleHead:
        if self.towers not in TOWERS:
            raise ValueError(f"towers must be one of {TOWERS}, not {self.towers!r}")
        if self.reads_text:
            self.features.fit([t for d in docs for t in d])
            if self.word_features:
                self.words = HashedTfidf(self.word_features, (1, 2), analyzer="word")
                self.words.fit([t for d in docs for t in d])
        if self.reads_txl and states:
            self.d_txl = states[0][0].shape[1]
        cur, mem, sizes = self._views(docs, states)
        sequences = [np.array([ROLE_LABELS.index(t) for t in d], dtype=np.int64) for d in labels]
        self.transitions = fit_transitions(sequences, len(ROLE_LABELS))
        counts = np.bincount(np.concatenate(sequences), minlength=len(ROLE_LABELS))
        self.log_prior = np.where(counts > 0, np.log(np.maximum(counts, 1) / counts.sum()), 0).astype(
            np.float32
        )
        y = torch.from_numpy(np.concatenate(sequences))
        # one seed's head swings by several points on a small held-apart set; the average of a few does not
        self.nets = [self._fit_one(cur, mem, y, sizes, epochs, seed + m) for m in range(self.members)]
        self.trained_on = list(doc_ids or [])
        return self

    def _fit_one(
        self,
        cur: torch.Tensor,
        mem: torch.Tensor,
        y: torch.Tensor,
        sizes: list[int],
        epochs: int,
        seed: int,
    ) -> DualTower:
        torch.manual_seed(seed)
        net = DualTower(*self._dims(), self.d_hidden, len(ROLE_LABELS), sequence=self.sequence)
        # classes are very unequal (OPINION dwarfs VERDICT); weighting by inverse sqrt frequency keeps
        # the rare but important roles from being ignored
        freq = torch.bincount(y, minlength=len(ROLE_LABELS)).float()
        weight = torch.where(
            freq > 0, (freq.sum() / freq.clamp(min=1)) ** self.class_power, torch.zeros_like(freq)
        )
        loss_fn = nn.CrossEntropyLoss(weight=weight / weight[weight > 0].mean())
        opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
        g = torch.Generator().manual_seed(seed)
        net.train()
        for _ in range(epochs):
            for idx, batch_sizes in self._batches(sizes, g):
                opt.zero_grad()
                loss_fn(net(cur[idx], mem[idx], batch_sizes), y[idx]).backward()
                opt.step()
        return net.eval()

    def _batches(self, sizes: list[int], g: torch.Generator, units: int = 256):
        """(unit indices, document sizes) of one epoch's batches of about `units` units: shuffled units,
        or with `sequence` shuffled whole documents (the GRU reads each one in order)."""
        if not self.sequence:
            for idx in torch.randperm(sum(sizes), generator=g).split(units):
                yield idx, None
            return
        starts = np.cumsum(sizes) - np.array(sizes, dtype=int)
        order = torch.randperm(len(sizes), generator=g).tolist()
        batch: list[int] = []
        for k, d in enumerate(order):
            batch.append(d)
            if sum(sizes[b] for b in batch) >= units or k == len(order) - 1:
                idx = torch.cat([torch.arange(starts[b], starts[b] + sizes[b]) for b in batch])
                if idx.numel():
                    yield idx, [sizes[b] for b in batch]
                batch = []

    @torch.no_grad()
    def predict_proba(self, docs: list[list[str]], states: TxlStates | None = None) -> list[np.ndarray]:
        """Per document, [units, len(ROLE_LABELS)] probabilities."""
        cur, mem, sizes = self._views(docs, states)
        probs = torch.stack([torch.softmax(net(cur, mem, sizes), -1) for net in self.nets]).mean(0).numpy()
        return np.split(probs, np.cumsum(sizes)[:-1])

    def decode(self, probs: np.ndarray) -> np.ndarray:
        """One document's role indices from its [units, roles] probabilities: Viterbi over the learned
        transitions at weight `smoothing`, or each unit's argmax; both after `debias`."""
        log_probs = np.log(np.maximum(probs, 1e-9))
        if self.debias and self.log_prior is not None:
            log_probs = log_probs - self.debias * self.log_prior
        if not self.smoothing or self.transitions is None:
            return log_probs.argmax(1)
        return viterbi(log_probs, self.transitions, self.smoothing)

    def predict(
        self, docs: list[list[str]], states: TxlStates | None = None
    ) -> list[list[tuple[BlockType, float]]]:
        """Per document, each unit's (role, the head's probability of that role). A role the decoding
        chose against the unit's own argmax keeps its (lower) probability, so flags on it stay rare."""
        return [
            [(ROLE_LABELS[int(j)], float(p[int(j)])) for j, p in zip(self.decode(pr), pr, strict=True)]
            for pr in self.predict_proba(docs, states)
        ]

    def save(self, path: str | Path) -> None:
        arrays = {
            f"net{m}.{k}": v.half().numpy()
            for m, net in enumerate(self.nets)
            for k, v in net.state_dict().items()
        }
        if self.reads_text:
            arrays["idf"] = self.features.idf.astype(np.float16)
        if self.words is not None:
            arrays["idf_words"] = self.words.idf.astype(np.float16)
        if self.transitions is not None:
            arrays["transitions"] = self.transitions
            arrays["log_prior"] = self.log_prior
        save_npz(
            Path(path),
            arrays,
            {
                "kind": "roles",
                "n_features": self.features.n_features,
                "ngram_range": list(self.features.ngram_range),
                "d_hidden": self.d_hidden,
                "decay": self.decay,
                "labels": [str(t) for t in ROLE_LABELS],
                "trained_on": self.trained_on,
                "towers": self.towers,
                "encoder": self.encoder,
                "d_txl": self.d_txl,
                "members": len(self.nets),
                "word_features": self.word_features,
                "cues": self.cues,
                "future": self.future,
                "sequence": self.sequence,
                "class_power": self.class_power,
                "smoothing": self.smoothing,
                "debias": self.debias,
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> RoleHead:
        a, meta = load_npz(Path(path))
        if meta["labels"] != [str(t) for t in ROLE_LABELS]:
            raise ValueError(f"{path}: role labels differ from this code's ROLE_LABELS")
        idf = a["idf"].astype(np.float32) if "idf" in a else None
        head = cls(
            HashedTfidf(meta["n_features"], tuple(meta["ngram_range"]), idf),
            meta["d_hidden"],
            meta["decay"],
            meta["towers"],
            meta["members"],
            trained_on=meta["trained_on"],
            encoder=meta["encoder"],
            d_txl=meta["d_txl"],
            # heads saved before these options read neither words, cues nor the future, nor decode
            word_features=meta.get("word_features", 0),
            cues=meta.get("cues", False),
            future=meta.get("future", False),
            sequence=meta.get("sequence", False),
            class_power=meta.get("class_power", 0.5),
            smoothing=meta.get("smoothing", 0.0),
            transitions=a.get("transitions"),
            debias=meta.get("debias", 0.0),
            log_prior=a.get("log_prior"),
        )
        if head.word_features:
            head.words = HashedTfidf(head.word_features, (1, 2), a["idf_words"].astype(np.float32), "word")
        for m in range(head.members):
            net = DualTower(*head._dims(), meta["d_hidden"], len(ROLE_LABELS), sequence=head.sequence)
            prefix = f"net{m}."
            net.load_state_dict(
                {
                    k[len(prefix) :]: torch.from_numpy(v.astype(np.float32))
                    for k, v in a.items()
                    if k.startswith(prefix)
                }
            )
            head.nets.append(net.eval())
        return head
