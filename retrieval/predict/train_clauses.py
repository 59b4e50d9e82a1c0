"""Training of the clause head (retrieval.predict.clauses) on CUAD's contracts outside the held-apart rule.

    train_clause_head(data_dir, cs=C_GRID) -> (ClauseHead, report)

A tenth of the training contracts (`retrieval.reader.train.is_validation` on the doc_id) chooses the
inverse regularisation C and whether a hit's confidence is weighted by its category's match rate, by
the AUPR of their questions (retrieval.eval.cuad.evaluate_clauses); the head is then fitted on every
training contract with those choices. The contracts `ldx eval cuad` holds apart are never read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.eval.cuad import Contract, evaluate_clauses, jaccard, load_cuad
from retrieval.predict.clauses import N_FEATURES, NGRAMS, ClauseHead, contract_sentences, overlapping
from retrieval.predict.tfidf import HashedTfidf
from retrieval.reader.train import is_validation

C_GRID = (1.0, 4.0, 16.0, 64.0)


@dataclass
class Rows:
    texts: list[str]  # every sentence of the contracts
    labels: np.ndarray  # (n_sentences, n_categories) bool
    matches: np.ndarray  # (n_sentences, n_categories) bool: a positive that matches a gold clause's words


def sentence_rows(contracts: list[Contract], categories: list[str]) -> Rows:
    texts, labels, matches = [], [], []
    column = {c: j for j, c in enumerate(categories)}
    for contract in contracts:
        spans = contract_sentences(contract.text)
        sentences = [contract.text[s:e] for s, e in spans]
        y = np.zeros((len(spans), len(categories)), dtype=bool)
        m = np.zeros_like(y)
        for cq in contract.questions:
            golds = [(s, s + len(g)) for s, g in zip(cq.starts, cq.golds, strict=True)]
            j = column[cq.category]
            y[:, j] = overlapping(spans, golds)
            for i in np.flatnonzero(y[:, j]):
                m[i, j] = any(jaccard(sentences[i], g) >= 0.5 for g in cq.golds)
        texts += sentences
        labels.append(y)
        matches.append(m)
    return Rows(texts, np.concatenate(labels), np.concatenate(matches))


def fit_head(rows: Rows, categories: list[str], c: float, meta: dict) -> ClauseHead:
    # start-up: scikit-learn's solvers are only needed to train
    from sklearn.linear_model import LogisticRegression

    features = HashedTfidf(N_FEATURES, NGRAMS, analyzer="word").fit(rows.texts)
    x = features.transform(rows.texts)
    coef, intercept = np.zeros((len(categories), N_FEATURES), np.float32), np.zeros(len(categories))
    for j in range(len(categories)):
        if rows.labels[:, j].any():
            model = LogisticRegression(C=c, solver="liblinear", max_iter=200).fit(x, rows.labels[:, j])
            coef[j], intercept[j] = model.coef_[0], model.intercept_[0]
        else:
            intercept[j] = -20.0  # never seen: never the answer
    positives = rows.labels.sum(0)
    match_rate = np.where(positives > 0, rows.matches.sum(0) / np.maximum(positives, 1), 0.0)
    return ClauseHead(categories, features, coef, intercept.astype(np.float32), match_rate, {**meta, "C": c})


def train_clause_head(data_dir: Path, cs: tuple[float, ...] = C_GRID) -> tuple[ClauseHead, dict]:
    t0 = time.perf_counter()
    contracts = load_cuad(data_dir, "train", None)
    categories = sorted({cq.category for k in contracts for cq in k.questions})
    fit_on = [k for k in contracts if not is_validation(k.doc_id)]
    chosen_on = [k for k in contracts if is_validation(k.doc_id)]
    rows = sentence_rows(fit_on, categories)
    report: dict = {"fit_contracts": len(fit_on), "validation_contracts": len(chosen_on), "validation": {}}
    best = (-1.0, cs[0], False)
    for c in cs:
        head = fit_head(rows, categories, c, {})
        for weighted in (False, True):
            head.meta["weighted"] = weighted
            aupr = evaluate_clauses(head, chosen_on)["aupr"]
            report["validation"][f"C={c:g}, weighted={weighted}"] = aupr
            best = max(best, (aupr, c, weighted))
    _, c, weighted = best
    all_rows = sentence_rows(contracts, categories)
    meta = {"weighted": weighted, "contracts": len(contracts), "sentences": len(all_rows.texts)}
    head = fit_head(all_rows, categories, c, meta)
    report.update(chosen={"C": c, "weighted": weighted}, seconds=round(time.perf_counter() - t0, 1))
    return head, report
