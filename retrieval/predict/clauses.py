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
(part of) such a clause. Where the gold is a few words of the sentence (the agreement's title, a party,
a date), the answer is those words (`clause_spans`): each category answers with the kind (the sentence,
a title, a party or a date) whose answers, taken from its likeliest sentence of each training contract,
matched the gold most often (word Jaccard ≥ 0.5), and `match_rate` keeps those shares per category and
kind. A head whose meta says `weighted` reports as a hit's confidence its probability times the match
rate of the kind it answered with (the training run chose that on validation contracts). Trained by
`retrieval.predict.train_clauses`.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.errors import CorruptDocument
from pipeline.records import Document, Evidence, Prediction
from retrieval.predict.clause_spans import KINDS, answer_span
from retrieval.predict.tfidf import HashedTfidf, load_npz, save_npz
from retrieval.text import ends_sentence

N_FEATURES = 1 << 16
NGRAMS = (1, 2)
_LAYOUT = ("categories", "kinds", "n_features", "ngram_range")  # meta keys the file's layout uses
# a sentence ends at a line break, or at . or ; before a capital, a bracket or a quote
_BOUNDARY = re.compile(r"\n+|(?<=[.;])\s+(?=[A-Z(\"“])")


def contract_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Character spans of the non-blank sentences of text[start:end], as offsets into `text`."""
    end = len(text) if end is None else end
    spans, pos = [], start
    for m in _BOUNDARY.finditer(text, start, end):
        if not m.group().strip(" ") and not ends_sentence(text, m.start()):  # "Inc. (“Newegg”)"
            continue
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
    confidence: float  # how sure the head is that `answer` is the clause as a lawyer marks it
    answer: tuple[int, int]  # offsets of the answer: the sentence, or the name or date in it


@dataclass
class ClauseHead:
    categories: list[str]
    features: HashedTfidf
    coef: np.ndarray  # (n_categories, n_features)
    intercept: np.ndarray  # (n_categories,)
    match_rate: np.ndarray  # (n_categories, len(KINDS)): per category and answer kind
    kinds: list[str]  # per category, the answer kind (clause_spans.KINDS) with the best match rate
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
        order = np.argsort(-p, axis=0, kind="stable")[:k]  # (k, n_categories)
        return [
            self.hit(text, spans[r], j, float(p[r, j]))
            for j in range(len(self.categories))
            for r in order[:, j]
        ]

    def hit(self, text: str, span: tuple[int, int], j: int, p: float) -> ClauseHit:
        """Category j's answer in the sentence `span` of `text` that the head gives probability `p`: the
        category's answer kind where it finds one in the sentence, else the whole sentence."""
        start, end = span
        kind = self.kinds[j]
        found = answer_span(kind, text[start:end])
        if found is None:  # no name or date in the sentence: it answers as itself
            kind, found = "sentence", (0, end - start)
        weight = float(self.match_rate[j, KINDS.index(kind)]) if self.meta.get("weighted") else 1.0
        return ClauseHit(self.categories[j], start, end, p, p * weight, (start + found[0], start + found[1]))

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
                "kinds": self.kinds,
                "n_features": self.features.n_features,
                "ngram_range": list(self.features.ngram_range),
            },
        )

    @classmethod
    def load(cls, path: str | Path) -> ClauseHead:
        try:
            a, meta = load_npz(Path(path))
            features = HashedTfidf(
                meta["n_features"], tuple(meta["ngram_range"]), a["idf"].astype(np.float32), analyzer="word"
            )
            head = cls(
                categories=list(meta["categories"]),
                features=features,
                coef=a["coef_q"].astype(np.float32) * a["coef_scale"][:, None],
                intercept=a["intercept"],
                match_rate=a["match_rate"],
                kinds=list(meta["kinds"]),
                meta={k: v for k, v in meta.items() if k not in _LAYOUT},
            )
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as e:
            raise CorruptDocument(str(path), f"not a clause head ({type(e).__name__}: {e})") from None
        n = len(head.categories)
        fits = head.coef.shape == (n, head.features.n_features) and head.match_rate.shape == (n, len(KINDS))
        if not fits or len(head.kinds) != n or not set(head.kinds) <= set(KINDS):
            raise CorruptDocument(str(path), "not a clause head (its arrays do not fit its categories)")
        return head


def clause_rows(
    doc: Document,
    segment_of: Callable[[int], str | None],
    head: ClauseHead,
    model_id: str,
    min_probability: float,
    k: int,
) -> list[Prediction]:
    """One "clause" row per category whose likeliest sentence of the contract reaches `min_probability`:
    the category, that probability, values [category, the answer's words (the sentence, or the title,
    party or date in it)], and as evidence up to `k` sentences that reach it, each with the page and
    bbox of its block. Sentences are cut within blocks, never across one."""
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
        answer = doc.text[hits[0].answer[0] : hits[0].answer[1]]
        rows.append(
            Prediction(
                doc.doc_id,
                "clause",
                category,
                hits[0].probability,
                model_id,
                evidence[0].segment_id,
                [category, answer],
                evidence,
            )
        )
    return sorted(rows, key=lambda r: -r.score)
