"""Contract clauses: which of CUAD's clause categories a contract holds, and the sentence that holds each.

    contract_sentences(text, start=0, end=None) -> [(start, end), ...]
    ClauseHead.load(path) / head.save(path)
    head.scores(sentences) -> (n_sentences, n_categories) probabilities
    head.best(text, spans, k=1) -> [ClauseHit, ...]: per category, its k likeliest sentences
    clause_rows(doc, segment_of, head, model_id, min_probability, k) -> [Prediction, ...] (task "clause")

A contract is read sentence by sentence: CUAD's answers to a clause category are, for all but the names
and dates, one sentence or most of one (median 27–76 words), so the sentence is the unit a lawyer
reviews and the one the head ranks. One logistic regression per category reads a sentence's hashed
TF-IDF word uni- and bigrams (`tfidf.HashedTfidf`); its probability says how likely that sentence is
(part of) such a clause. `match_rate` is, per category, the share of its training positives whose words
match a gold clause (word Jaccard ≥ 0.5): low for the names and dates, whose gold is a few words of a
long sentence. A head whose meta says `weighted` reports as a hit's confidence its probability times
that rate (the training run chose it on validation contracts). Trained by
`retrieval.predict.train_clauses`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.records import Document, Evidence, Prediction
from retrieval.predict.tfidf import HashedTfidf, load_npz, save_npz

N_FEATURES = 1 << 16
NGRAMS = (1, 2)
# a sentence ends at a line break, or at . or ; before a capital, a bracket or a quote
_BOUNDARY = re.compile(r"\n+|(?<=[.;])\s+(?=[A-Z(\"“])")


def contract_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Character spans of the non-blank sentences of text[start:end], as offsets into `text`."""
    end = len(text) if end is None else end
    spans, pos = [], start
    for m in _BOUNDARY.finditer(text, start, end):
        if text[pos : m.start()].strip():
            spans.append((pos, m.start()))
        pos = m.end()
    if text[pos:end].strip():
        spans.append((pos, end))
    return spans


def overlapping(spans: list[tuple[int, int]], golds: list[tuple[int, int]]) -> np.ndarray:
    """Which spans a gold span covers: they share at least half of the shorter of the two."""
    hit = np.zeros(len(spans), dtype=bool)
    for gs, ge in golds:
        for i, (s, e) in enumerate(spans):
            shared = min(e, ge) - max(s, gs)
            if shared > 0 and shared >= 0.5 * min(e - s, ge - gs):
                hit[i] = True
    return hit


@dataclass
class ClauseHit:
    category: str
    start: int  # offsets of the sentence in the text it was found in
    end: int
    probability: float  # the head's probability that this sentence is (part of) such a clause
    confidence: float  # how sure the head is that the sentence is the clause as a lawyer marks it


@dataclass
class ClauseHead:
    categories: list[str]
    features: HashedTfidf
    coef: np.ndarray  # (n_categories, n_features)
    intercept: np.ndarray  # (n_categories,)
    match_rate: np.ndarray  # (n_categories,)
    meta: dict

    def scores(self, sentences: list[str]) -> np.ndarray:
        """(n_sentences, n_categories) probabilities."""
        if not sentences:
            return np.zeros((0, len(self.categories)), dtype=np.float32)
        logits = self.features.transform(sentences) @ self.coef.T + self.intercept
        return 1 / (1 + np.exp(-np.asarray(logits, dtype=np.float64)))

    def best(self, text: str, spans: list[tuple[int, int]], k: int = 1) -> list[ClauseHit]:
        """Per category (in the head's order), its `k` likeliest sentences among `spans` (offsets into
        `text`), the likeliest first; [] without spans."""
        if not spans:
            return []
        p = self.scores([text[s:e] for s, e in spans])
        weight = self.match_rate if self.meta.get("weighted") else np.ones(len(self.categories))
        order = np.argsort(-p, axis=0, kind="stable")[:k]  # (k, n_categories)
        return [
            ClauseHit(c, *spans[r], float(p[r, j]), float(p[r, j] * weight[j]))
            for j, c in enumerate(self.categories)
            for r in order[:, j]
        ]

    def save(self, path: str | Path) -> None:
        scale = (np.abs(self.coef).max(1) / 127).clip(min=1e-12).astype(np.float32)
        save_npz(
            Path(path),
            {
                "idf": self.features.idf.astype(np.float16),
                # int8 with one scale per category, as the article head stores its weights
                "coef_q": np.round(self.coef / scale[:, None]).astype(np.int8),
                "coef_scale": scale,
                "intercept": self.intercept.astype(np.float32),
                "match_rate": self.match_rate.astype(np.float32),
            },
            {
                **self.meta,
                "categories": self.categories,
                "n_features": self.features.n_features,
                "ngram_range": list(self.features.ngram_range),
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> ClauseHead:
        a, meta = load_npz(Path(path))
        features = HashedTfidf(
            meta["n_features"], tuple(meta["ngram_range"]), a["idf"].astype(np.float32), analyzer="word"
        )
        return cls(
            categories=list(meta["categories"]),
            features=features,
            coef=a["coef_q"].astype(np.float32) * a["coef_scale"][:, None],
            intercept=a["intercept"],
            match_rate=a["match_rate"],
            meta={k: v for k, v in meta.items() if k not in ("categories", "n_features", "ngram_range")},
        )


def clause_rows(
    doc: Document,
    segment_of: Callable[[int], str | None],
    head: ClauseHead,
    model_id: str,
    min_probability: float,
    k: int,
) -> list[Prediction]:
    """One "clause" row per category whose likeliest sentence of the contract reaches `min_probability`:
    the category, that probability, and as evidence up to `k` sentences that reach it, each with the page
    and bbox of its block. Sentences are cut within blocks, never across one."""
    spans, blocks = [], []
    for b in doc.blocks:
        for span in contract_sentences(doc.text, b.char_start, b.char_end):
            spans.append(span)
            blocks.append(b)
    block_of = dict(zip(spans, blocks, strict=True))
    by_category: dict[str, list[ClauseHit]] = {}
    for hit in head.best(doc.text, spans, k):
        if hit.probability >= min_probability:
            by_category.setdefault(hit.category, []).append(hit)
    rows = []
    for category, hits in by_category.items():
        evidence = []
        for h in hits:
            b = block_of[(h.start, h.end)]
            box = list(b.bbox) if b.bbox is not None else None
            evidence.append(
                Evidence(segment_of(h.start), h.start, h.end, doc.text[h.start : h.end], b.page, box)
            )
        score = hits[0].probability
        rows.append(
            Prediction(
                doc.doc_id, "clause", category, score, model_id, evidence[0].segment_id, [category], evidence
            )
        )
    return sorted(rows, key=lambda r: -r.score)
