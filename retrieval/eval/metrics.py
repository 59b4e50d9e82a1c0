"""Ranking metrics (graded nDCG, recall), the extractive-QA metrics of CJRC (char-level EM/F1), and the
confidence bar that maximises F1 of answer-vs-abstain (`choose_threshold`, which chose `ldx ask`'s)."""

from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Mapping, Sequence

# ASCII punctuation plus the full-width and CJK marks that appear in CJRC answers.
_PUNCT = set(string.punctuation) | set(
    "，。、；：？！“”‘’（）【】《》〈〉「」『』〔〕…—～·．％＋－／＜＝＞＠＼＾＿｀｜"
)


def ndcg_at_k(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """nDCG@k with graded gains (linear gain, log2 discount); 0 when nothing is relevant."""
    dcg = sum(gains.get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Share of the relevant items (gain > 0) found in the first k."""
    relevant = {d for d, g in gains.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranking[:k])) / len(relevant)


def normalize_answer(text: str) -> str:
    """CJRC's normalisation: lower case, no punctuation, no whitespace."""
    return "".join(c for c in text.lower() if c not in _PUNCT and not c.isspace())


def exact_match(pred: str, gold: str) -> float:
    return float(normalize_answer(pred) == normalize_answer(gold))


def char_f1(pred: str, gold: str) -> float:
    """F1 over characters of the normalised strings; two empty strings (no answer) agree fully."""
    return overlap_f1(list(normalize_answer(pred)), list(normalize_answer(gold)))


def overlap_f1(p: list[str], g: list[str]) -> float:
    """F1 of the multiset overlap of predicted and gold units (characters, words); both empty agree."""
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def best_over_golds(pred: str, golds: Sequence[str]) -> tuple[float, float]:
    """(EM, F1) of a prediction against the best-matching gold answer."""
    golds = list(golds) or [""]
    return max(exact_match(pred, g) for g in golds), max(char_f1(pred, g) for g in golds)


def choose_threshold(
    confidences: list[float], correct: list[bool], answerable: list[bool]
) -> tuple[float, float]:
    """(threshold, F1) maximising F1 of answer-vs-abstain: answering at confidence >= threshold, precision is
    right answers over answers given, recall right answers over answerable questions."""
    n_answerable = sum(answerable)
    best = (0.0, 0.0)
    for t in sorted(set(confidences)):
        given = [ok for c, ok in zip(confidences, correct, strict=True) if c >= t]
        right = sum(given)
        if not given or not right or not n_answerable:
            continue
        p, r = right / len(given), right / n_answerable
        f1 = 2 * p * r / (p + r)
        if f1 > best[1]:
            best = (t, f1)
    return best
