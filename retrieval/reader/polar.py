"""The yes-no decider: YES, NO or no answer to a question whose form asks yes or no (`answer_types`), from
the reader's own scores for those three and from what the context says where it answers the question.

The reader's head learned its answer types from CJRC, where one question in seven is a yes-no question:
it answers YES to most of them and NO to almost none, below always answering YES. What tells NO from YES
is mostly whether the context negates what the question asserts (被告是否支付货款？ … 被告至今未支付), and
what tells no answer is whether the context holds the question's words at all; a small logistic model
over those and the reader's scores, fitted on the reader's training questions, decides instead of the
head. It is stored beside the reader (`polar.json`) with the sha256 of the reader it was fitted on, and
used only with that reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from pipeline.errors import CorruptDocument
from pipeline.records import sha256_file
from pipeline.store import atomic_write_bytes
from retrieval.text import terms

POLAR_LABELS = ("YES", "NO", "NONE")
# the words that make a Chinese question a yes-no one (questions.answer_types detects them, the decider
# cuts them from what the question asserts)
ASKING_ZH = "是否|有没有|是不是|有无|能否|可否"
_ASKING = re.compile(rf"{ASKING_ZH}|吗|^\s*(is|are|was|were|did|does|do|has|have|had)\b", re.I)
_NEGATION = re.compile(r"未|没有|没|不|无|拒|否认|非|否|\b(not|no|never|neither|nor|without)\b|n't", re.I)
_CLAUSE = re.compile(r"[，。；！？,;!?]|\.\s")
_NEGATING = re.compile(r"未|没|不|无|非|否|拒")  # one character before a matched word negates it (未支付)
_NEGATION_REACH = 3  # characters before a matched bigram where a negation reads it
N_FEATURES = 16  # polar_features' length: the reader's 3 scores, 7 read by words, 6 by bigrams


def polar_features(question: str, context: str, scores: Sequence[float]) -> list[float]:
    """The decider's inputs: the reader's YES, NO and no-answer scores; the share of the question's words
    (its asking words cut) in the clause holding most of them and in the whole context; that clause's
    negations, and those of it with the clause after, beyond the question's own; whether it holds 未;
    whether the question negates; whether exactly one of the two negates; then the same read by the
    question's character bigrams (`bigram_features`), which need no word segmentation."""
    asserted = _ASKING.sub("", question)
    words = set(terms(asserted)) or {asserted}
    clauses = [c for c in _CLAUSE.split(context) if c.strip()] or [""]
    held = [sum(w in c for w in words) for c in clauses]
    j = int(np.argmax(held))
    best, after = clauses[j], clauses[j + 1] if j + 1 < len(clauses) else ""
    q_neg = len(_NEGATION.findall(asserted))
    return [
        *scores,
        held[j] / len(words),
        sum(w in context for w in words) / len(words),
        len(_NEGATION.findall(best)) - q_neg,
        len(_NEGATION.findall(best + after)) - q_neg,
        float("未" in best),
        float(q_neg > 0),
        float(bool(_NEGATION.search(best)) != (q_neg > 0)),
        *bigram_features(asserted, clauses),
    ]


def _bigrams(text: str) -> set[str]:
    text = re.sub(r"\W", "", text)
    return {text[i : i + 2] for i in range(len(text) - 1)}


def bigram_features(asserted: str, clauses: list[str]) -> list[float]:
    """What the clauses hold of the question's character bigrams: the share in the clause holding most
    of them, in the next best clause and in the whole context; whether a negation stands just before a
    matched bigram in the best clause (被告至今未支付货款 against 被告是否支付货款), and whether exactly
    one of that and the question negates; the negations around the best clause (it and its neighbours)
    beyond the question's own."""
    asked = _bigrams(asserted)
    if not asked:
        return [0.0] * 6
    shares = [len(asked & _bigrams(c)) / len(asked) for c in clauses]
    order = np.argsort(shares)[::-1]
    j = int(order[0])
    best = clauses[j]
    negated = any(
        _NEGATING.search(best[max(0, m.start() - _NEGATION_REACH) : m.start()])
        for b in asked
        for m in re.finditer(re.escape(b), best)
    )
    q_neg = bool(_NEGATING.search(asserted))
    around = "".join(clauses[max(0, j - 1) : j + 2])
    return [
        shares[j],
        shares[int(order[1])] if len(order) > 1 else 0.0,
        len(asked & _bigrams("".join(clauses))) / len(asked),
        float(negated),
        float(negated != q_neg),
        float(bool(_NEGATING.search(around))) - float(q_neg),
    ]


@dataclass
class PolarHead:
    coef: list[list[float]]  # [3, F], rows in POLAR_LABELS order
    intercept: list[float]  # [3]
    reader_sha256: str  # the reader whose scores it reads
    metrics: dict = field(default_factory=dict)

    def log_probs(self, question: str, context: str, scores: Sequence[float]) -> np.ndarray:
        """[3] log P(YES), log P(NO), log P(no answer)."""
        z = np.asarray(self.coef) @ np.asarray(polar_features(question, context, scores)) + self.intercept
        return z - np.logaddexp.reduce(z)

    @classmethod
    def fit(
        cls, rows: Iterable[tuple[str, str, Sequence[float], str]], reader_sha256: str, c: float = 0.3
    ) -> PolarHead:
        """From (question, context, reader's YES/NO/NONE scores, gold label) rows; `c`: the inverse
        penalty (0.3, chosen on the reader's validation questions among 0.1–3)."""
        # scikit-learn: ~0.8 s to import, training only (see retrieval.predict.heads.ArticleHead.fit)
        from sklearn.linear_model import LogisticRegression  # start-up: sklearn ~0.8 s

        rows = list(rows)
        x = np.array([polar_features(q, ctx, s) for q, ctx, s, _ in rows])
        y = np.array([POLAR_LABELS.index(g) for *_, g in rows])
        if len(set(y)) < len(POLAR_LABELS):
            raise ValueError("the yes-no decider needs YES, NO and no-answer questions to learn from")
        m = LogisticRegression(C=c, max_iter=2000).fit(x, y)
        return cls(m.coef_.tolist(), m.intercept_.tolist(), reader_sha256, {"questions": len(rows)})

    def save(self, path: Path) -> None:
        atomic_write_bytes(Path(path), json.dumps(asdict(self), indent=1).encode())

    @classmethod
    def load(cls, path: Path) -> PolarHead:
        try:
            blob = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls(blob["coef"], blob["intercept"], blob["reader_sha256"], blob.get("metrics", {}))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise CorruptDocument(str(path), f"not a yes-no decider ({type(e).__name__}: {e})") from None

    @classmethod
    def beside(cls, reader_path: Path, reader_sha256: str | None = None) -> PolarHead | None:
        """The decider kept beside the reader at `reader_path` (`polar_file`) when it was fitted on that
        very file (`reader_sha256`: that file's, when the caller has it) over the inputs this code reads;
        one fitted on another reader, or on other inputs (`ldx train polar` fits it again), is not used."""
        path = polar_file(reader_path)
        if not path.is_file():
            return None
        polar = cls.load(path)
        fits = {len(row) for row in polar.coef} == {N_FEATURES}
        return polar if fits and polar.reader_sha256 == (reader_sha256 or sha256_file(reader_path)) else None


def polar_file(reader_path: Path) -> Path:
    """Where the yes-no decider of the reader at `reader_path` is kept: beside it, as polar.json."""
    return Path(reader_path).with_name("polar.json")
