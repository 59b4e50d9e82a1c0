"""Prediction heads for analysts: statute articles from the facts of a criminal judgment (`ArticleHead`,
here), and the block role of a segment from its text and its context (`RoleHead`, a dual-tower head in
retrieval/predict/role_head.py, importable from here).

Both heads read text through a small hashed TF-IDF view so they train in seconds on CPU and ship in a
few megabytes (retrieval/predict/tfidf.py); `RoleHead`'s towers can read a Transformer-XL instead or as
well (`txl_views`: the segment's pooled final states, and the states in the model's memory when it reads
the segment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy import sparse

from retrieval.predict.criminal import (
    StatuteIndex,
    accused_charges,
    charge_parts,
    circumstance_features,
)
from retrieval.predict.role_head import (  # the role head's public names, importable from here as before
    ROLE_LABELS,
    TOWERS,
    RoleHead,
    TxlStates,
    txl_views,
)
from retrieval.predict.tfidf import HashedTfidf, load_npz, save_npz

__all__ = ["ROLE_LABELS", "TOWERS", "ArticleHead", "ArticleHeads", "RoleHead", "TxlStates", "txl_views"]

# ---- articles --------------------------------------------------------------------------------------


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


@dataclass
class ArticleHead:
    """Multi-label 刑法 article prediction from what a case says: its facts (`reads` "facts"), or its facts
    with the court's reasoning and sentence, every citation cut (`reads` "judgment",
    `retrieval.predict.facts.court_text`). The view is fixed when the head is trained; "facts" below
    stands for what it reads.

    Two channels per article: a linear model over the hashed TF-IDF of the facts, and the retrieved
    memory — the similarity-weighted article votes of the `k` most similar training cases (their facts
    are kept as hashed TF-IDF rows, never as text). A logistic stacker learned on out-of-fold scores
    joins the channels; with `memory=False` only the linear channel is used, recalibrated on its own.

    A third channel reads the charges the facts name as accused (构成盗窃罪): each points to its
    special-part article (the training verdicts' `charge_articles`, else the article whose text the
    charge's wording opens, `statutes`), and that article's probability is raised to `charge_prob`, the
    share of such pointers that were right on the training cases.

    Where the training cases hold an article often enough (`min_stack` times, and as often not), it gets
    a stacker of its own that also reads the sentencing circumstances the facts name
    (`circumstance_features`): the general-part articles (罚金, 缓刑, 自首, 共同犯罪 …) follow those
    more than the wording of the facts.
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
    statutes: StatuteIndex | None = None  # the special-part articles' texts
    charge_prob: float = 0.0  # 0 = the charge channel is off
    # label index -> weights of its own stacker over [linear, votes, circumstances..., bias]
    per_article: dict[int, list[float]] = field(default_factory=dict)
    min_stack: int = 20  # positives (and negatives) a label needs for a stacker of its own
    k: int = 10
    min_count: int = 2
    alpha: float = 1.0  # ridge penalty of the linear channel
    reads: str = "facts"  # the view it was trained on: "facts" or "judgment"

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

    def charge_pointers(self, text: str) -> set[int]:
        """The special-part articles the charges `text` names point to (see the class)."""
        out: set[int] = set()
        for charge in accused_charges(text):
            # a charge joined with 、 is one charge (生产、销售假药罪) where it points somewhere as a whole
            for name in [charge] if self._points(charge) else charge_parts(charge):
                out.update(self._points(name))
        return out

    def _points(self, charge: str) -> list[int]:
        known = self.charge_articles.get(charge)
        found = self.statutes.article_of(charge) if self.statutes and not known else None
        return known or ([found] if found else [])

    @property
    def outputs(self) -> list[int]:
        """The articles the head scores: its trained labels, then the special-part articles only a
        charge can point to (a charge the training cases never had still reaches its article)."""
        pointable = set(self.statutes.texts) if self.statutes else set()
        pointable.update(a for arts in self.charge_articles.values() for a in arts)
        return self.labels + sorted(pointable - set(self.labels))

    def _charge_channel(self, texts: list[str]) -> np.ndarray:
        outputs = self.outputs
        index = {a: j for j, a in enumerate(outputs)}
        hits = np.zeros((len(texts), len(outputs)), dtype=bool)
        for n, text in enumerate(texts):
            for a in self.charge_pointers(text) & index.keys():
                hits[n, index[a]] = True
        return hits

    def _fit_charge_channel(self, texts: list[str], articles: list[list[int]]) -> None:
        """`charge_prob` from the training cases (after charge_articles and statutes are set)."""
        hits = self._charge_channel(texts)
        gold = [set(a) for a in articles]
        outputs = self.outputs
        right = sum(outputs[j] in gold[n] for n, j in zip(*np.nonzero(hits), strict=True))
        self.charge_prob = right / hits.sum() if hits.any() else 0.0

    def _stacked(
        self, mode: str, linear: np.ndarray, votes: np.ndarray, texts: list[str] | None = None
    ) -> np.ndarray:
        w = self.stack[mode]
        z = w[0] * linear + w[-1]
        if mode == "memory":
            z = z + w[1] * _logit(votes * 0.98 + 0.01)
            if self.per_article and texts is not None:
                cues = np.array([circumstance_features(t) for t in texts], np.float32)  # [N, C]
                for j, wj in self.per_article.items():
                    z[:, j] = _own_inputs(linear, votes, cues, j) @ np.asarray(wj[:-1]) + wj[-1]
        return 1 / (1 + np.exp(-z))

    # -- training
    def fit(self, texts: list[str], articles: list[list[int]], seed: int = 0) -> ArticleHead:
        """Fit every channel and the stackers on `texts` and their `articles`. Set `charge_articles`
        and `statutes` first: the charge channel is fitted here, and the thresholds chosen with it on."""
        # scikit-learn costs ~0.8 s to import (measured after flows.tasks, which every ldx command loads);
        # only training needs it, so a run that loads this head never pays it
        from sklearn.model_selection import KFold  # start-up: sklearn ~0.8 s

        y = self._targets(articles)
        self.features.fit(texts)
        x = self.features.transform(texts)
        # out-of-fold linear scores, so the stackers see the linear channel as it behaves on new cases
        oof = np.zeros(y.shape, dtype=np.float32)
        for tr, te in KFold(3, shuffle=True, random_state=seed).split(texts):
            coef, icpt = _fit_multilabel_linear(x[tr], y[tr], self.alpha)
            oof[te] = np.asarray(x[te] @ coef.T) + icpt
        self.coef, self.intercept = _fit_multilabel_linear(x, y, self.alpha)
        self.memory_x, self.memory_y = x, y
        self._fit_charge_channel(texts, articles)
        self._fit_stackers(oof, self._votes(x, exclude_self=True), y, texts)
        return self

    def _targets(self, articles: list[list[int]]) -> np.ndarray:
        """[N, L] article indicators over the labels seen at least `min_count` times (set here)."""
        counts: dict[int, int] = {}
        for arts in articles:
            for a in set(arts):
                counts[a] = counts.get(a, 0) + 1
        self.labels = sorted(a for a, c in counts.items() if c >= self.min_count)
        index = {a: i for i, a in enumerate(self.labels)}
        y = np.zeros((len(articles), len(self.labels)), dtype=bool)
        for n, arts in enumerate(articles):
            y[n, [index[a] for a in arts if a in index]] = True
        return y

    def _fit_stackers(self, oof: np.ndarray, votes: np.ndarray, y: np.ndarray, texts: list[str]) -> None:
        from sklearn.linear_model import LogisticRegression  # start-up: sklearn ~0.8 s (see fit)

        for mode in ("plain", "memory"):
            cols = [oof.ravel()] + ([_logit(votes * 0.98 + 0.01).ravel()] if mode == "memory" else [])
            m = LogisticRegression(C=1.0, max_iter=500).fit(np.stack(cols, 1), y.ravel())
            self.stack[mode] = [*m.coef_[0].tolist(), float(m.intercept_[0])]
        cues = np.array([circumstance_features(t) for t in texts], np.float32)
        often = (y.sum(0) >= self.min_stack) & ((~y).sum(0) >= self.min_stack)
        self.per_article = {}
        for j in np.flatnonzero(often):
            # a strong penalty: 20 positives fit ~35 weights
            m = LogisticRegression(C=0.3, max_iter=2000).fit(_own_inputs(oof, votes, cues, j), y[:, j])
            self.per_article[int(j)] = [*m.coef_[0].tolist(), float(m.intercept_[0])]
        for mode in ("plain", "memory"):
            probs = self._with_charges(self._stacked(mode, oof, votes, texts), texts)
            self.threshold[mode] = _best_threshold(probs[:, : len(self.labels)], y)

    # -- inference
    def predict_proba(self, texts: list[str], memory: bool = True) -> np.ndarray:
        """[len(texts), len(outputs)] probabilities."""
        x = self.features.transform(texts)
        linear = self._linear(x)
        votes = self._votes(x) if memory else np.zeros_like(linear)
        return self._with_charges(self._stacked("memory" if memory else "plain", linear, votes, texts), texts)

    def _with_charges(self, probs: np.ndarray, texts: list[str]) -> np.ndarray:
        """[N, L] label probabilities as [N, len(outputs)], each article a named charge points to
        raised to `charge_prob`."""
        probs = np.pad(probs, ((0, 0), (0, len(self.outputs) - len(self.labels))))
        if self.charge_prob > 0:
            probs = np.where(self._charge_channel(texts), np.maximum(probs, self.charge_prob), probs)
        return probs

    def predict(self, texts: list[str], memory: bool = True) -> list[dict[int, float]]:
        """Per text: {article: probability} of the articles above the threshold (at least the top one)."""
        return [self.decide(p, memory) for p in self.predict_proba(texts, memory)]

    def decide(self, probs: np.ndarray, memory: bool = True) -> dict[int, float]:
        """{article: probability} of one case's scores above the threshold (at least the top one)."""
        return _decide(probs, self.outputs, self.threshold["memory" if memory else "plain"])

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
                "statutes": {str(a): t for a, t in self.statutes.texts.items()} if self.statutes else {},
                "charge_prob": self.charge_prob,
                "per_article": {str(j): w for j, w in self.per_article.items()},
                "reads": self.reads,
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> ArticleHead:
        a, meta = load_npz(Path(path))
        feats = HashedTfidf(meta["n_features"], tuple(meta["ngram_range"]), a["idf"].astype(np.float32))
        n_labels = len(meta["labels"])
        statutes = meta.get("statutes")  # heads saved before the charge channel have none
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
            statutes=StatuteIndex({int(a): t for a, t in statutes.items()}) if statutes else None,
            charge_prob=meta.get("charge_prob", 0.0),
            per_article={int(j): w for j, w in meta.get("per_article", {}).items()},
            reads=meta.get("reads", "facts"),  # heads saved before the judgment view read the facts
        )


# the shipped heads' files, by the view each reads
ARTICLE_FILES = {"facts": "articles.npz", "judgment": "articles_judgment.npz"}


@dataclass
class ArticleHeads:
    """The article heads of a folder, one per view: a case whose court's part can be read
    (`retrieval.predict.facts.court_text`) goes to the judgment head, any other case (facts alone, or no
    judgment head in the folder) to the facts head."""

    facts: ArticleHead | None = None
    judgment: ArticleHead | None = None
    files: dict[str, Path] = field(default_factory=dict)  # view -> the file its head came from

    @classmethod
    def load(cls, root: str | Path) -> ArticleHeads:
        files = {v: Path(root) / name for v, name in ARTICLE_FILES.items() if (Path(root) / name).exists()}
        return cls(**{v: ArticleHead.load(p) for v, p in files.items()}, files=files)

    def view_for(self, court: str) -> str | None:
        """Which head reads a case with this court's part ("" for none); None when the folder has none."""
        if court and self.judgment is not None:
            return "judgment"
        if self.facts is not None:
            return "facts"
        return "judgment" if self.judgment is not None else None

    def head(self, view: str | None) -> ArticleHead | None:
        return {"facts": self.facts, "judgment": self.judgment}.get(view or "")

    @property
    def charge_articles(self) -> dict[str, list[int]]:
        """The charge → article table (the heads of one training run share it)."""
        head = self.judgment or self.facts
        return head.charge_articles if head else {}


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


def _own_inputs(linear: np.ndarray, votes: np.ndarray, cues: np.ndarray, j: int) -> np.ndarray:
    """[N, 2 + C] what label j's own stacker reads: its linear score, its votes' logit, the cues."""
    return np.column_stack([linear[:, j], _logit(votes[:, j] * 0.98 + 0.01), cues])


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
