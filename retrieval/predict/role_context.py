"""What the block-role head reads besides a unit's own character n-grams: lexical cues that hashed
lower-cased n-grams blur (a citation's "v." and "AIR", a capitalised "Section", "we hold", "appeal is
dismissed"), and the order roles come in — a transition matrix learned from the training documents and
Viterbi decoding of the head's probabilities over a whole document (roles come in runs: the facts, the
arguments, the court's reasoning, the order).
"""

from __future__ import annotations

import re

import numpy as np

# Case-sensitive where case carries the meaning (a reporter's "AIR", a statute's "Section" at any place
# in a sentence); each cue counts its matches, read as log1p.
CUES: tuple[re.Pattern, ...] = tuple(
    re.compile(p)
    for p in (
        r"\bv(?:s)?\.\s",  # Ram v. State: a case name
        r"\b(?:AIR|SCC|SCR|All ER|AC|QB|KB|WLR|Cri\s?LJ|Bom|Mad|Cal|ILR)\b",  # law reports
        r"[\[(](?:18|19|20)\d\d[\])]",  # (1954) / [1955], the year of a report
        r"\b(?:Section|Sections|sub-section|S\.|Sec\.)\s*\d*",
        r"\b(?:Article|Articles|Art\.)\s*\d*",
        r"\b(?:Act|Code|Rules?|Regulation|Ordinance|Constitution|Schedule)\b",
        r"\b(?:clause|proviso|Explanation)\b",
        r"\b(?:contend|contended|contention|submi(?:t|ts|tted|ssion)|argu(?:e|ed|ment)|urged|pleaded)\b",
        r"\b(?:learned|senior) (?:counsel|Advocate|Solicitor|Attorney)",
        r"\b(?:counsel|Advocate|appearing)\b",
        r"\b(?:[Ww]e (?:hold|are of|think|find|agree|see|do not|are unable|have no|are satisfied|consider)|"
        r"[Ii]n our (?:view|opinion|judgment))",
        r"\b(?:this Court|their Lordships|Privy Council|Federal Court|the Court)\b",
        r"\b(?:held|observed|laid down|ruled|decided)\b",
        r"\b(?:High Court|trial (?:court|judge|Judge)|Sessions|Tribunal|Magistrate|District Judge|"
        r"Subordinate Judge|Additional|Division Bench|single Judge|learned Judge)",
        r"\b(?:appeal|petition|writ|application)s? (?:is|are|stands?|must be|should be|be) "
        r"(?:dismissed|allowed|accepted|rejected)",
        r"\b(?:dismissed|allowed|set aside|quashed|remanded|acquitted|convicted|sentenced)\b",
        r"\b(?:costs?|no order as to costs)\b",
        r"\b(?:appellant|respondent|petitioner|accused|plaintiff|defendant)s?\b",
        r"\b(?:on|dated?) (?:the )?\d{1,2}(?:st|nd|rd|th)?\b|\b(?:18|19|20)\d\d\b",  # dates: the facts' chronology
        r"\b(?:filed|instituted|preferred|granted|executed|married|died|sold|purchased)\b",
        r'["“”]',  # quotation: statutes and earlier judgments are quoted
        r"\b(?:Rs\.?|rupees)",
    )
)
N_CUES = len(CUES) + 1  # the cues, and the unit's length in words


def cue_features(texts: list[str]) -> np.ndarray:
    """[len(texts), N_CUES]: log1p of each cue's count, then log1p of the word count / 4."""
    out = np.zeros((len(texts), N_CUES), dtype=np.float32)
    for i, t in enumerate(texts):
        out[i, :-1] = [len(c.findall(t)) for c in CUES]
        out[i, -1] = len(t.split()) / 4
    return np.log1p(out)


def fit_transitions(sequences: list[np.ndarray], n_classes: int, prior: float = 1.0) -> np.ndarray:
    """log P(next role | role) from the label-index sequences of the training documents, each row
    smoothed by `prior` pseudo-counts spread evenly (a role never seen next stays possible)."""
    counts = np.full((n_classes, n_classes), prior / n_classes, dtype=np.float64)
    for seq in sequences:
        np.add.at(counts, (seq[:-1], seq[1:]), 1)
    return np.log(counts / counts.sum(1, keepdims=True)).astype(np.float32)


def viterbi(log_probs: np.ndarray, log_transitions: np.ndarray, strength: float) -> np.ndarray:
    """The label path maximising Σ log p_t(y_t) + strength · Σ log T[y_(t-1), y_t] over one document.

    `log_probs` [n, k] are the head's per-unit log probabilities; strength 0 (or a uniform T) leaves each
    unit its own argmax."""
    n, k = log_probs.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    trans = strength * log_transitions.astype(np.float64)
    score = log_probs[0].astype(np.float64)
    back = np.zeros((n, k), dtype=np.int64)
    for t in range(1, n):
        cand = score[:, None] + trans  # [previous, next]
        back[t] = cand.argmax(0)
        score = cand[back[t], np.arange(k)] + log_probs[t]
    path = np.zeros(n, dtype=np.int64)
    path[-1] = int(score.argmax())
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path
