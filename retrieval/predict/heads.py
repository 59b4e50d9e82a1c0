"""Prediction heads for analysts: statute articles from the facts of a criminal judgment, and the block
role of a segment from its text and its context (a dual-tower head).

Both heads read text through a small hashed TF-IDF view so they train in seconds on CPU and ship in a
few megabytes (retrieval/predict/tfidf.py); `RoleHead`'s towers can read a Transformer-XL instead or as well (`txl_views`: the
segment's pooled final states, and the states in the model's memory when it reads the segment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
from scipy import sparse
from torch import nn

from pipeline.records import BlockType
from retrieval.predict.tfidf import HashedTfidf, load_npz, save_npz

# ---- articles --------------------------------------------------------------------------------------


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


@dataclass
class ArticleHead:
    """Multi-label 刑法 article prediction from facts.

    Two channels per article: a linear model over the hashed TF-IDF of the facts, and the retrieved
    memory — the similarity-weighted article votes of the `k` most similar training cases (their facts
    are kept as hashed TF-IDF rows, never as text). A logistic stacker learned on out-of-fold scores
    joins the channels; with `memory=False` only the linear channel is used, recalibrated on its own.
    """

    features: HashedTfidf = field(default_factory=HashedTfidf)
    labels: list[int] = field(default_factory=list)
    coef: np.ndarray | None = None  # [L, F]
    intercept: np.ndarray | None = None  # [L]
    memory_x: sparse.csr_matrix | None = None  # [N, F] facts of the cases retrieval can return
    memory_y: np.ndarray | None = None  # [N, L] their articles
    stack: dict[str, list[float]] = field(default_factory=dict)  # per mode: weights + bias
    threshold: dict[str, float] = field(default_factory=dict)  # per mode
    memory_ids: list[str] = field(default_factory=list)  # case ids of the memory rows, for evidence
    charge_articles: dict[str, list[int]] = field(default_factory=dict)  # 盗窃罪 -> [264], learned
    k: int = 10
    min_count: int = 2
    alpha: float = 1.0  # ridge penalty of the linear channel

    # -- channels
    def _linear(self, x: sparse.csr_matrix) -> np.ndarray:
        return np.asarray(x @ self.coef.T) + self.intercept

    @cached_property
    def _memory_t(self) -> sparse.csr_matrix:
        # transposed once: scipy would convert memory_x.T to CSR again on every product
        return sparse.csr_matrix(self.memory_x.T)

    def _votes(self, x: sparse.csr_matrix, exclude_self: bool = False) -> np.ndarray:
        sims = (x @ self._memory_t).toarray()
        if exclude_self:
            np.fill_diagonal(sims, -1)
        top = np.argsort(-sims, axis=1)[:, : self.k]
        w = np.clip(np.take_along_axis(sims, top, 1), 0, None)
        votes = np.einsum("nk,nkl->nl", w, self.memory_y[top].astype(np.float32))
        return votes / np.maximum(w.sum(1, keepdims=True), 1e-6)

    def _stacked(self, mode: str, linear: np.ndarray, votes: np.ndarray) -> np.ndarray:
        w = self.stack[mode]
        z = w[0] * linear + w[-1]
        if mode == "memory":
            z = z + w[1] * _logit(votes * 0.98 + 0.01)
        return 1 / (1 + np.exp(-z))

    # -- training
    def fit(self, texts: list[str], articles: list[list[int]], seed: int = 0) -> ArticleHead:
        # scikit-learn costs ~0.8 s to import (measured after flows.tasks, which every ldx command loads);
        # only training needs it, so a run that loads this head never pays it
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import KFold

        counts: dict[int, int] = {}
        for arts in articles:
            for a in set(arts):
                counts[a] = counts.get(a, 0) + 1
        self.labels = sorted(a for a, c in counts.items() if c >= self.min_count)
        index = {a: i for i, a in enumerate(self.labels)}
        y = np.zeros((len(texts), len(self.labels)), dtype=bool)
        for n, arts in enumerate(articles):
            for a in arts:
                if a in index:
                    y[n, index[a]] = True
        self.features.fit(texts)
        x = self.features.transform(texts)

        def linear_fit(xs, ys):
            return _fit_multilabel_linear(xs, ys, self.alpha)

        # out-of-fold linear scores, so the stacker sees the linear channel as it behaves on new cases
        oof = np.zeros(y.shape, dtype=np.float32)
        for tr, te in KFold(3, shuffle=True, random_state=seed).split(texts):
            coef, icpt = linear_fit(x[tr], y[tr])
            oof[te] = np.asarray(x[te] @ coef.T) + icpt
        self.coef, self.intercept = linear_fit(x, y)
        self.memory_x, self.memory_y = x, y
        votes = self._votes(x, exclude_self=True)

        for mode in ("plain", "memory"):
            cols = [oof.ravel()] + ([_logit(votes * 0.98 + 0.01).ravel()] if mode == "memory" else [])
            m = LogisticRegression(C=1.0, max_iter=500).fit(np.stack(cols, 1), y.ravel())
            self.stack[mode] = [*m.coef_[0].tolist(), float(m.intercept_[0])]
            probs = self._stacked(mode, oof, votes)
            self.threshold[mode] = _best_threshold(probs, y)
        return self

    # -- inference
    def predict_proba(self, texts: list[str], memory: bool = True) -> np.ndarray:
        x = self.features.transform(texts)
        linear = self._linear(x)
        votes = self._votes(x) if memory else np.zeros_like(linear)
        return self._stacked("memory" if memory else "plain", linear, votes)

    def predict(self, texts: list[str], memory: bool = True) -> list[dict[int, float]]:
        """Per text: {article: probability} of the articles above the threshold (at least the top one)."""
        return [self.decide(p, memory) for p in self.predict_proba(texts, memory)]

    def decide(self, probs: np.ndarray, memory: bool = True) -> dict[int, float]:
        """{article: probability} of one case's scores above the threshold (at least the top one)."""
        return _decide(probs, self.labels, self.threshold["memory" if memory else "plain"])

    def retrieved(self, text: str, k: int | None = None) -> list[tuple[int, float]]:
        """(memory row, similarity) of the most similar stored cases, for evidence."""
        sims = (self.features.transform([text]) @ self._memory_t).toarray().ravel()
        top = np.argsort(-sims)[: k or self.k]
        return [(int(i), float(sims[i])) for i in top]

    # -- persistence
    def save(self, path: str | Path) -> None:
        mx = self.memory_x.tocsr()
        save_npz(
            Path(path),
            {
                "idf": self.features.idf.astype(np.float16),
                # int8 with one scale per article: a quarter of float32, well inside what thresholds resolve
                "coef_q": np.round(self.coef / _scale(self.coef)[:, None]).astype(np.int8),
                "coef_scale": _scale(self.coef),
                "intercept": self.intercept.astype(np.float32),
                "mem_data": mx.data.astype(np.float16),
                "mem_indices": mx.indices.astype(np.int32),
                "mem_indptr": mx.indptr.astype(np.int32),
                "mem_y": np.packbits(self.memory_y, axis=1),
            },
            {
                "kind": "articles",
                "labels": self.labels,
                "n_features": self.features.n_features,
                "ngram_range": list(self.features.ngram_range),
                "stack": self.stack,
                "threshold": self.threshold,
                "k": self.k,
                "memory_ids": self.memory_ids,
                "charge_articles": self.charge_articles,
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> ArticleHead:
        a, meta = load_npz(Path(path))
        feats = HashedTfidf(meta["n_features"], tuple(meta["ngram_range"]), a["idf"].astype(np.float32))
        n_labels = len(meta["labels"])
        mem_x = sparse.csr_matrix(
            (a["mem_data"].astype(np.float32), a["mem_indices"], a["mem_indptr"]),
            shape=(len(a["mem_indptr"]) - 1, feats.n_features),
        )
        return cls(
            features=feats,
            labels=meta["labels"],
            coef=a["coef_q"].astype(np.float32) * a["coef_scale"][:, None],
            intercept=a["intercept"],
            memory_x=mem_x,
            memory_y=np.unpackbits(a["mem_y"], axis=1, count=n_labels).astype(bool),
            stack=meta["stack"],
            threshold=meta["threshold"],
            k=meta["k"],
            memory_ids=meta["memory_ids"],
            charge_articles=meta["charge_articles"],
        )


def _fit_multilabel_linear(
    x: sparse.csr_matrix, y: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regression of ±1 article indicators on the features, all articles at once.

    Solved in its dual form, (X Xᵀ + αI)⁻¹ over the n training cases: with a few hundred cases and 16k
    hashed features that is one small linear solve instead of an iterative fit per article. The
    stacker turns its scores into probabilities."""
    target = 2 * y.astype(np.float32) - 1
    bias = target.mean(0)
    gram = (x @ x.T).toarray().astype(np.float64)
    dual = np.linalg.solve(gram + alpha * np.eye(gram.shape[0]), (target - bias).astype(np.float64))
    coef = np.asarray(x.T @ dual).T.astype(np.float32)
    return coef, bias.astype(np.float32)


def _scale(coef: np.ndarray) -> np.ndarray:
    return (np.abs(coef).max(1) / 127).clip(min=1e-12).astype(np.float32)


def _decide(p: np.ndarray, labels: list[int], threshold: float) -> dict[int, float]:
    chosen = {labels[j]: float(p[j]) for j in np.flatnonzero(p >= threshold)}
    if not chosen and len(p):
        j = int(np.argmax(p))
        chosen[labels[j]] = float(p[j])
    return chosen


def _best_threshold(probs: np.ndarray, y: np.ndarray) -> float:
    """The global threshold that maximises micro-F1 on (out-of-fold) training scores."""
    best, best_f1 = 0.5, -1.0
    for t in np.linspace(0.1, 0.9, 33):
        pred = probs >= t
        top = np.argmax(probs, 1)
        pred[np.arange(len(pred)), top] = True
        tp = (pred & y).sum()
        f1 = 2 * tp / max(1, pred.sum() + y.sum())
        if f1 > best_f1:
            best, best_f1 = float(t), f1
    return best


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
    document it sits); the towers meet only before the classification head."""

    def __init__(self, d_current: int, d_memory: int, d_hidden: int, n_classes: int, dropout: float = 0.1):
        super().__init__()
        self.current = nn.Sequential(nn.Linear(d_current, d_hidden), nn.GELU(), nn.LayerNorm(d_hidden))
        self.memory = nn.Sequential(nn.Linear(d_memory, d_hidden), nn.GELU(), nn.LayerNorm(d_hidden))
        self.head = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(3 * d_hidden, d_hidden), nn.GELU(), nn.Linear(d_hidden, n_classes)
        )

    def forward(self, current: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        a, b = self.current(current), self.memory(memory)
        return self.head(torch.cat([a, b, a * b], -1))


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
            x = self.features.transform([t for d in docs for t in d]).toarray()
            parts = np.split(x, np.cumsum(sizes)[:-1])
            cur.append(x)
            mem.append(np.concatenate([_decayed_past(p, self.decay) for p in parts]))
        if self.reads_txl:
            if states is None or [len(c) for c, _ in states] != sizes:
                raise ValueError(f"a {self.towers!r} role head needs the encoder's states of every unit")
            cur.append(np.concatenate([c for c, _ in states]))
            mem.append(np.concatenate([m for _, m in states]))
        mem.append(np.concatenate([position_features(n) for n in sizes]))
        return (
            torch.from_numpy(np.concatenate(cur, 1).astype(np.float32)),
            torch.from_numpy(np.concatenate(mem, 1).astype(np.float32)),
            sizes,
        )

    def _dims(self) -> tuple[int, int]:
        text = self.features.n_features if self.reads_text else 0
        txl = self.d_txl if self.reads_txl else 0
        return text + txl, text + 2 * txl + N_POSITION

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
        if self.reads_txl and states:
            self.d_txl = states[0][0].shape[1]
        cur, mem, _ = self._views(docs, states)
        y = torch.tensor([ROLE_LABELS.index(t) for d in labels for t in d])
        # one seed's head swings by several points on a small held-apart set; the average of a few does not
        self.nets = [self._fit_one(cur, mem, y, epochs, seed + m) for m in range(self.members)]
        self.trained_on = list(doc_ids or [])
        return self

    def _fit_one(
        self, cur: torch.Tensor, mem: torch.Tensor, y: torch.Tensor, epochs: int, seed: int
    ) -> DualTower:
        torch.manual_seed(seed)
        net = DualTower(*self._dims(), self.d_hidden, len(ROLE_LABELS))
        # classes are very unequal (OPINION dwarfs VERDICT); weighting by inverse sqrt frequency keeps
        # the rare but important roles from being ignored
        freq = torch.bincount(y, minlength=len(ROLE_LABELS)).float()
        weight = torch.where(freq > 0, (freq.sum() / freq.clamp(min=1)).sqrt(), torch.zeros_like(freq))
        loss_fn = nn.CrossEntropyLoss(weight=weight / weight[weight > 0].mean())
        opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
        g = torch.Generator().manual_seed(seed)
        net.train()
        for _ in range(epochs):
            for idx in torch.randperm(len(y), generator=g).split(256):
                opt.zero_grad()
                loss_fn(net(cur[idx], mem[idx]), y[idx]).backward()
                opt.step()
        return net.eval()

    @torch.no_grad()
    def predict_proba(self, docs: list[list[str]], states: TxlStates | None = None) -> list[np.ndarray]:
        """Per document, [units, len(ROLE_LABELS)] probabilities."""
        cur, mem, sizes = self._views(docs, states)
        probs = torch.stack([torch.softmax(net(cur, mem), -1) for net in self.nets]).mean(0).numpy()
        return np.split(probs, np.cumsum(sizes)[:-1])

    def predict(
        self, docs: list[list[str]], states: TxlStates | None = None
    ) -> list[list[tuple[BlockType, float]]]:
        return [
            [(ROLE_LABELS[int(j)], float(p[int(j)])) for j, p in zip(pr.argmax(1), pr, strict=True)]
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
        )
        for m in range(head.members):
            net = DualTower(*head._dims(), meta["d_hidden"], len(ROLE_LABELS))
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
