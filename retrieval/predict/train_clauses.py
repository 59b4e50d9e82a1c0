"""Training of the clause head (retrieval.predict.clauses) on CUAD's contracts outside the held-apart rule.

    train_clause_head(data_dir, cs=C_GRID) -> (ClauseHead, report)

Each category's answer kind (the sentence, or the title, party or date in it: clause_spans) is the one
whose answers, taken from the category's likeliest sentence of each training contract, match its gold
most often. A tenth of the training contracts (`retrieval.reader.train.is_validation` on the doc_id)
chooses the inverse regularisation C and whether a hit's confidence is weighted by its category's match
rate, by the AUPR of their questions (retrieval.eval.cuad.evaluate_clauses); the head is then fitted on
every training contract with those choices. The contracts `ldx eval cuad` holds apart are never read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy import sparse

from retrieval.eval.cuad import Contract, evaluate_clauses, jaccard, load_cuad
from retrieval.predict.clause_spans import KINDS, answer_span
from retrieval.predict.clauses import N_FEATURES, NGRAMS, ClauseHead, contract_sentences, overlapping
from retrieval.predict.tfidf import HashedTfidf
from retrieval.reader.train import is_validation

C_GRID = (1.0, 4.0, 16.0, 64.0)


@dataclass
class Rows:
    texts: list[str]  # every sentence of the contracts
    labels: np.ndarray  # (n_sentences, n_categories) bool
    spans: list[list[tuple[int, int]]]  # each contract's sentences, in order: texts is their concatenation

    @cached_property
    def view(self) -> tuple[HashedTfidf, sparse.csr_matrix]:
        """The TF-IDF fitted on these sentences and the sentences through it (every C reads the same)."""
        features = HashedTfidf(N_FEATURES, NGRAMS, analyzer="word").fit(self.texts)
        return features, features.transform(self.texts)


def sentence_rows(contracts: list[Contract], categories: list[str]) -> Rows:
    texts, labels, spans_of = [], [], []
    column = {c: j for j, c in enumerate(categories)}
    for contract in contracts:
        spans = contract_sentences(contract.text)
        y = np.zeros((len(spans), len(categories)), dtype=bool)
        for cq in contract.questions:
            golds = [(s, s + len(g)) for s, g in zip(cq.starts, cq.golds, strict=True)]
            y[:, column[cq.category]] = overlapping(spans, golds)
        texts += [contract.text[s:e] for s, e in spans]
        labels.append(y)
        spans_of.append(spans)
    return Rows(texts, np.concatenate(labels), spans_of)


def answer_rates(p: np.ndarray, rows: Rows, contracts: list[Contract], categories: list[str]) -> np.ndarray:
    """(n_categories, len(KINDS)): over the answerable questions, how often each kind of answer taken from
    the category's likeliest sentence matches a gold (word Jaccard >= 0.5). p: the head's probabilities
    for rows.texts. The likeliest sentence, not every positive: a party's name is in the preamble the
    head ranks first, not in the signature lines that also mention it."""
    right, asked = np.zeros((len(categories), len(KINDS))), np.zeros((len(categories), 1))
    column = {c: j for j, c in enumerate(categories)}
    start = 0
    for contract, spans in zip(contracts, rows.spans, strict=True):
        top = p[start : start + len(spans)].argmax(0)
        start += len(spans)
        for cq in contract.questions:
            j = column[cq.category]
            if not cq.golds or not spans:
                continue
            s, e = spans[top[j]]
            asked[j] += 1
            for k, kind in enumerate(KINDS):
                found = answer_span(kind, contract.text[s:e])
                answer = contract.text[s + found[0] : s + found[1]] if found else ""
                right[j, k] += found is not None and any(jaccard(answer, g) >= 0.5 for g in cq.golds)
    return right / np.maximum(asked, 1)


def fit_head(
    rows: Rows, contracts: list[Contract], categories: list[str], c: float, meta: dict
) -> ClauseHead:
    """The head fitted on `rows` (sentence_rows of `contracts`), with each category's answer kind and
    match rates read from its own likeliest sentences there."""
    # start-up: scikit-learn's solvers are only needed to train
    from sklearn.linear_model import LogisticRegression

    features, x = rows.view
    coef, intercept = np.zeros((len(categories), N_FEATURES), np.float32), np.zeros(len(categories))
    for j in range(len(categories)):
        if rows.labels[:, j].any():
            model = LogisticRegression(C=c, solver="liblinear", max_iter=200, random_state=0)
            model.fit(x, rows.labels[:, j])
            coef[j], intercept[j] = model.coef_[0], model.intercept_[0]
        else:
            intercept[j] = -20.0  # never seen: never the answer
    p = np.asarray(x @ coef.T + intercept)  # logits rank as the probabilities do
    match_rate = answer_rates(p, rows, contracts, categories)
    kinds = [KINDS[i] for i in match_rate.argmax(1)]  # a tie keeps the sentence (KINDS[0])
    return ClauseHead(
        categories, features, coef, intercept.astype(np.float32), match_rate, kinds, {**meta, "C": c}
    )


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
        head = fit_head(rows, fit_on, categories, c, {})
        for weighted in (False, True):
            head.meta["weighted"] = weighted
            aupr = evaluate_clauses(head, chosen_on)["aupr"]
            report["validation"][f"C={c:g}, weighted={weighted}"] = aupr
            best = max(best, (aupr, c, weighted))
    _, c, weighted = best
    all_rows = sentence_rows(contracts, categories)
    meta = {"weighted": weighted, "contracts": len(contracts), "sentences": len(all_rows.texts)}
    head = fit_head(all_rows, contracts, categories, c, meta)
    report.update(chosen={"C": c, "weighted": weighted}, seconds=round(time.perf_counter() - t0, 1))
    return head, report
