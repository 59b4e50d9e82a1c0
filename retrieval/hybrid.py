"""Hybrid search over segments: BM25 terms plus dense arms, fused by reciprocal rank, with metadata filters.

Every arm ranks the passages that pass the filters; reciprocal rank fusion (RRF) adds
weight/(rrf_k + rank) over the arms, so arms with incomparable score scales (BM25 sums, cosines) combine
without tuning. At document level each arm first ranks documents by their best passage (max-passage),
then fuses.

The weights depend on the query's language. A query whose letters are mostly Han characters
(`zh_min_han_share`) takes `zh_arm_weights` over `arm_weights`; a zero weight skips the arm altogether,
as long as another arm is left. On Chinese text the packaged sentence model (arm "minilm") is close to
noise: its English vocabulary maps most Han characters to [UNK]. The shipped encoder's keys (arm "txl",
trained to retrieve: data/models/README.md) rank CLCR cases at 0.949 × BM25's nDCG@10 (0.355 against
0.374, 40 queries, `ldx eval retrieval`), and BM25 + TXL at equal weights reach 0.394, but that gain's
interval over the queries spans zero ([−0.030, +0.067]), so by default Chinese queries are still answered
by BM25 alone (`zh_arm_weights`); English queries keep every arm (CUAD segment recall@10: BM25 0.612, with
MiniLM 0.727).
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from retrieval.config import RetrievalConfig
from retrieval.text import sentences, terms


@dataclass
class Passage:
    """One searchable unit (a segment) with the metadata filters act on."""

    segment_id: str
    doc_id: str
    text: str
    block_type: str = "OTHER"
    kind: str | None = None
    court: str | None = None
    date: dt.date | None = None


def sentences_of(passages: Sequence[Passage]) -> list[tuple[int, str, str]]:
    """(passage index, segment_id, sentence) of every sentence of the passages, in the text's order."""
    return [
        (i, p.segment_id, p.text[a:b].strip()) for i, p in enumerate(passages) for a, b in sentences(p.text)
    ]


@dataclass
class Filters:
    """Metadata conditions; None means no condition. `court` matches as a substring (courts have long names)."""

    doc_ids: set[str] | None = None
    kinds: set[str] | None = None
    block_types: set[str] | None = None
    court: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    def allows(self, p: Passage) -> bool:
        if self.doc_ids is not None and p.doc_id not in self.doc_ids:
            return False
        if self.kinds is not None and p.kind not in self.kinds:
            return False
        if self.block_types is not None and p.block_type not in self.block_types:
            return False
        if self.court is not None and (p.court is None or self.court not in p.court):
            return False
        if self.date_from is not None and (p.date is None or p.date < self.date_from):
            return False
        if self.date_to is not None and (p.date is None or p.date > self.date_to):
            return False
        return True


class DenseArm(Protocol):
    """A dense ranking of passages: the `n` best rows among `allowed` (None = all) for a query text."""

    def top(self, query: str, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class MatrixArm:
    """Exact inner-product search over unit vectors of some passages: `vectors[i]` belongs to passage row
    `rows[i]` (all rows in order when `rows` is None); passages without a vector are never returned."""

    vectors: np.ndarray
    encode_query: Callable[[str], np.ndarray]
    n_passages: int
    rows: np.ndarray | None = None

    def top(self, query: str, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(self.encode_query(query), dtype=np.float32).reshape(-1)
        if self.rows is None:
            return _top(self.vectors @ q, n, allowed)
        scores = np.full(self.n_passages, -np.inf, dtype=np.float32)
        scores[self.rows] = self.vectors @ q
        return _top(scores, n, allowed)


@dataclass
class Hit:
    """A fused result: a segment (segment level) or a document (document level, with its best segment)."""

    doc_id: str
    segment_id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # 1-based rank in each arm that found it


def _top(scores: np.ndarray, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float32)
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    n = min(n, int(np.isfinite(scores).sum()))
    if n <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    rows = np.argpartition(-scores, n - 1)[:n]
    rows = rows[np.argsort(-scores[rows], kind="stable")]
    return rows.astype(np.int64), scores[rows]


def han_share(text: str) -> float:
    """The share of Han characters among the letters of `text` (0 when it has no letters)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(unicodedata.name(c, "").startswith("CJK") for c in letters) / len(letters)


def arm_weights(query: str, config: RetrievalConfig) -> dict[str, float]:
    """The RRF weight of each named arm for `query` (an arm not named weighs 1)."""
    weights = dict(config.arm_weights)
    if han_share(query) >= config.zh_min_han_share:
        weights.update(config.zh_arm_weights)
    return weights


def rrf(
    rankings: dict[str, Sequence], rrf_k: int = 60, weights: dict[str, float] | None = None
) -> list[tuple[object, float, dict[str, int]]]:
    """Weighted reciprocal rank fusion of several rankings of the same kind of key, best first."""
    fused: dict[object, float] = {}
    ranks: dict[object, dict[str, int]] = {}
    for arm, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(arm, 1.0)
        for r, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + w / (rrf_k + r)
            ranks.setdefault(key, {})[arm] = r
    order = sorted(fused, key=lambda key: -fused[key])
    return [(key, fused[key], ranks[key]) for key in order]


class HybridIndex:
    """BM25 over the passages' terms plus any number of named dense arms; searched with `search`.

    `config` gives the fusion weights (`arm_weights`, `zh_arm_weights`, `zh_min_han_share`)."""

    def __init__(
        self,
        passages: list[Passage],
        bm25: bool = True,
        show_progress: bool = False,
        config: RetrievalConfig | None = None,
    ):
        self.passages = passages
        self.config = config or RetrievalConfig()
        self.row_of = {p.segment_id: i for i, p in enumerate(passages)}
        self.dense: dict[str, DenseArm] = {}
        self.bm25 = None
        if bm25 and passages:
            # lazy, a start-up cost: bm25s adds ~0.15 s to `import retrieval.hybrid` (measured)
            import bm25s

            self.bm25 = bm25s.BM25()
            self.bm25.index([terms(p.text) for p in passages], show_progress=show_progress)

    @property
    def arms(self) -> list[str]:
        return (["bm25"] if self.bm25 is not None else []) + list(self.dense)

    def add_dense(self, name: str, arm: DenseArm) -> None:
        self.dense[name] = arm

    def mask(self, filters: Filters | None) -> np.ndarray | None:
        if filters is None:
            return None
        return np.fromiter((filters.allows(p) for p in self.passages), dtype=bool, count=len(self.passages))

    def arm_top(
        self, arm: str, query: str, n: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `n` best passage rows of one arm with their scores."""
        if arm == "bm25":
            q = terms(query)
            if self.bm25 is None or not q:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            scores = self.bm25.get_scores(q)
            rows, s = _top(scores, n, allowed)
            keep = s > 0  # a passage sharing no term with the query is not a BM25 match
            return rows[keep], s[keep]
        return self.dense[arm].top(query, n, allowed)

    def search(
        self,
        query: str,
        k: int = 10,
        filters: Filters | None = None,
        level: str = "segment",
        arms: Sequence[str] | None = None,
        depth: int = 1000,
        rrf_k: int = 60,
        weights: dict[str, float] | None = None,
    ) -> list[Hit]:
        """Top-k hits for `query`: `level` is "segment" or "document"; `arms` defaults to every arm;
        `weights` (arm -> RRF weight) defaults to the language-aware `arm_weights` of the query."""
        if level not in ("segment", "document"):
            raise ValueError(f"level must be 'segment' or 'document', not {level!r}")
        arms = list(arms) if arms is not None else self.arms
        unknown = [a for a in arms if a not in self.arms]
        if unknown:
            raise KeyError(f"unknown search arm(s) {unknown}; this index has {self.arms}")
        weights = arm_weights(query, self.config) if weights is None else weights
        weighted = [a for a in arms if weights.get(a, 1.0) > 0]
        if weighted:
            arms = weighted
        else:  # only zero-weight arms were asked for: search them, equally weighted
            weights = {}
        allowed = self.mask(filters)
        per_arm = {a: self.arm_top(a, query, depth, allowed) for a in arms}
        if level == "segment":
            fused = rrf({a: rows.tolist() for a, (rows, _) in per_arm.items()}, rrf_k, weights)
            return [
                Hit(self.passages[row].doc_id, self.passages[row].segment_id, score, ranks)
                for row, score, ranks in fused[:k]
            ]
        # A document's segment is its best-ranked passage in any arm (ties: the earlier arm).
        best: dict[str, tuple[int, int]] = {}
        doc_rankings: dict[str, list[str]] = {}
        for a, (rows, _) in per_arm.items():
            ranking: list[str] = []
            seen: set[str] = set()
            for row in rows.tolist():  # best first, so a document's first row is its best in this arm
                d = self.passages[row].doc_id
                if d in seen:
                    continue
                seen.add(d)
                ranking.append(d)
                if d not in best or len(ranking) < best[d][0]:
                    best[d] = (len(ranking), row)
            doc_rankings[a] = ranking
        fused = rrf(doc_rankings, rrf_k, weights)
        return [Hit(d, self.passages[best[d][1]].segment_id, score, ranks) for d, score, ranks in fused[:k]]
