"""Ranking the sentences of retrieved passages for a sentence question (`rank_sentences`): overlap with the
question (idf-weighted; the heading a sentence stands under counts with it), for English averaged with the
sentence model's cosine (retrieval.evidence), plus a prior where the answer stands (`fits_kind`, with
retrieval.sides: the disposition, a ruling below, a party's words, the court's reasoning, the articles
applied, the claim named) and, for a reason, the court speaking for itself (`voiced`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from retrieval.answer import HEADING_MAX_WORDS, Citation, is_heading
from retrieval.chinese_spans import cites_law_applied
from retrieval.claim_questions import CLAIM_BLOCKS as PATENT_CLAIM_BLOCKS
from retrieval.claim_questions import asked_claim, states_claim
from retrieval.outcome_questions import CASE_INSTANCE
from retrieval.reader.runtime import content_terms, term_spans
from retrieval.sides import (
    CLAIM_BLOCKS,
    DECISION_BLOCKS,
    court_answers,
    decision_fit,
    is_claim,
    is_ruling,
    is_ruling_below,
    states_own_ruling,
    states_ruling,
)
from retrieval.text import HAN, sentences

SENTENCE_MIN_CHARS = 12  # shorter "sentences" are headings ("Conclusion", "Discussion")
# ... except a Chinese sentence with its full stop: 驳回上诉，维持原判。 and 驳回张某某的再审申请。 are whole rulings
ZH_SENTENCE_MIN_HAN = 4
REASON_BLOCKS = frozenset({"OPINION"})  # 本院认为, the judges' discussion
LAW_BLOCKS = frozenset({"OPINION", "APPENDIX"})  # 依照…之规定，判决如下 closes 本院认为; a digest's 关联索引
# never an answer to a sentence question: titles, parties, court names and signatures
NON_ANSWER_BLOCKS = frozenset({"HEADER", "PARTIES", "SIGNATURE"})
# nor, to a decision question, a note or an index (一审：…法院（2024）…号民事判决: a case number, not a ruling)
NON_DECISION_BLOCKS = NON_ANSWER_BLOCKS | {"APPENDIX"}
# an English sentence's relevance is this share of its cosine with the question (the sentence model) plus the
# rest of its term overlap: equal halves, set a priori and not tuned (the one English question set,
# tests/data/english_questions.json, is kept for measuring)
SIMILARITY_WEIGHT = 0.5
# a Chinese sentence's: the cosine of its Transformer-XL key (the key head's, as the index holds them) with
# the question's, a smaller share; chosen over 0, 0.2, 0.3, 0.5 and 0.7 on the six Chinese general question
# sets (benchmarks/data/general_questions_zh*.json, gold sentence first in 58, 62, 63, 61, 56 of 97)
KEY_SIMILARITY_WEIGHT = 0.3
# the words that only say a question asks for a decision ("What did the court decide?"): every sentence of
# an opinion may hold "court" or "case", and none of them tells the ruling from what stands beside it
_DECISION_TERMS = content_terms("court case decide decision rule ruling outcome result")
BLOCK_PRIOR = 1.0  # added to a sentence's overlap score (which is at most 1) when its block fits the question
# the court speaking for itself ("In my judgment …", "I conclude that …", "… was therefore right"): where an
# English judgment gives its reasons and its view on a point, unless quoting another
VOICE_PRIOR = 0.15
_VOICE = re.compile(
    r"\b(in (my|our) (judgment|view|opinion)|it seems to me|it follows|therefore|accordingly|"
    r"for (these|those|all these|all those|the) (\w+ )?reasons|fell into error|was (wrong|right) to|"
    r"i (would )?(conclude|consider|accept|reject|agree|hold|am (not )?satisfied|"
    r"do not (accept|consider|think)|cannot accept)|"
    r"we (conclude|hold|agree|consider|accept|reject|are (not )?satisfied))\b",
    re.I,
)
_OWN_VIEW = re.compile(
    r"\b(in (my|our) (judgment|view|opinion)|it seems to me|"
    r"i (would )?(conclude|consider|think|accept|reject|hold|am (not )?satisfied|"
    r"do not (accept|consider|think)|cannot accept)|"
    r"we (conclude|hold|consider|think|accept|reject|are (not )?satisfied|do not (accept|consider|think)))\b",
    re.I,
)
# where a judgment may give its own view on a point besides its reasoning, as the parser typed it: the court
# answering a party's argument it reports (关于上诉人…的上诉理由，经查，…), a discussion taken for facts
_VIEW_BLOCKS = frozenset({"FACTS", "CLAIMS", "DEFENSE"})
# 因此 …, 故 … (not 故意, 事故), 由于 …, 鉴于 …: a Chinese sentence giving a reason or the conclusion drawn from it
_ZH_BECAUSE = re.compile(r"因此|所以|由于|因为|鉴于|(?<![事缘变])故(?!意)")
# the reasons of the court below as a later judgment reports them, and a question asking those, not its own
_ZH_BELOW_VIEW = re.compile(r"(一审|原审)(法院)?(认为|认定)")
_ZH_ASKS_BELOW = re.compile(r"一审|原审")
# …unless it names the appeal court or what it did (唐山中院说一审认定事实有错，那为什么还是驳回上诉？)
_ZH_ASKS_OWN = re.compile(r"二审|再审|本院|中院|中级|高院|高级|驳回上诉|维持原判|改判")
_ISSUE = re.compile(r"\b(issues?|questions?|point|dispute)\b[^.;]{0,80}\b(is|was|are|were)\s+whether\b", re.I)
_QUOTED = re.compile(r"^\W{0,3}[“\"‘]|^\s*\d+\.\s*[“\"]")  # opens a quotation


@dataclass
class ScoredSentence:
    segment_id: str
    block_type: str
    start: int  # characters in the segment's text
    end: int
    text: str
    overlap: float  # idf-weighted share of the question's terms the sentence holds, in [0, 1]
    similarity: float | None  # cosine with the question (the sentence model), None when not used
    score: float  # relevance (overlap, or overlap and similarity weighed) plus the block-type prior


def is_sentence(s: str) -> bool:
    """A candidate answer sentence, not a heading: long enough, or a Chinese sentence with its full stop."""
    if is_heading(s):
        return False
    s = s.strip()
    return len(s) >= SENTENCE_MIN_CHARS or (
        s.endswith(("。", "！", "？")) and len(HAN.findall(s)) >= ZH_SENTENCE_MIN_HAN
    )


def instances(sentence: str) -> set[str]:
    """The instances (一审, 二审, 再审) whose case numbers a sentence cites: it holds that instance's word, for a
    question asking what 二审 decided."""
    return {word for word, number in CASE_INSTANCE if number.search(sentence)}


def fits_kind(
    kind: str, block_type: str, sentence: str, question: str = "", answering: bool = False
) -> float:
    """How well a sentence stands where a `kind` question's answer stands (1 or 0; for a decision, see
    `retrieval.sides.decision_fit`): the disposition (or a ruling reported in the facts or reasons) for a
    decision, a lower court's decision reported for a ruling below, a party's words for an argument, the
    court's reasoning for a reason, the citation of the articles applied for a question asking the law, the
    claim the `question` names for a patent claim; `answering`: an earlier sentence of the same passage has
    the court answering a point (经查 …), so this one goes on with its view."""
    if kind == "patent claim":
        return states_claim(asked_claim(question) or 0, block_type, sentence)
    if kind == "decision":
        return decision_fit(block_type, sentence)
    if kind == "ruling below":
        return is_ruling_below(block_type, sentence)
    if kind == "argument":
        return is_claim(block_type, sentence)
    if kind == "law":  # 依照《…》第…条之规定, or an index of the articles applied; not one quoted in passing
        return cites_law_applied(sentence)
    # a reason is the court's reasoning, not the order it led to ("I would order …"), a party's case nor the
    # question it answers ("The narrow point on appeal is whether …", "(c) Is PD 51Z inconsistent …?"); a
    # paragraph typed as facts or a party's where the court gives its own view ("I do not think …", 经查 …) is
    # reasoning too, and so is the rest of it
    if answering and block_type in _VIEW_BLOCKS:
        block_type = "OPINION"
    own = owns_view(sentence)
    return (
        kind == "reason"
        and (block_type in REASON_BLOCKS or (block_type in _VIEW_BLOCKS and own))
        and not is_ruling(block_type, sentence)
        and (own or not is_claim(block_type, sentence))
        and not _ISSUE.search(sentence)
        and not sentence.rstrip().endswith(("?", "？"))
    )


def with_dispositions(kind: str, citations: list[Citation], doc_passages: list) -> list[tuple[str, str, str]]:
    """(segment_id, block type, text) of the cited passages and, for a decision question, the disposition
    segments of the document asked about (`doc_passages`, its `retrieval.hybrid.Passage`s) and its English
    passages stating a ruling that the search left out: a ruling is seldom worded like the question ("the
    appeal is dismissed" for "what did the court decide"); for an argument question, the parties' blocks
    (诉讼请求 for 原告要求什么); for a law question, the court's reasoning and the document's index
    (LAW_BLOCKS); for a patent claim, the claims."""
    cited = [(c.segment_id, c.block_type, c.text) for c in citations]
    wanted = {
        "decision": DECISION_BLOCKS,
        "argument": CLAIM_BLOCKS,
        "law": LAW_BLOCKS,
        "patent claim": PATENT_CLAIM_BLOCKS,
    }.get(kind)
    if wanted is None:
        return cited
    seen = {c.segment_id for c in citations}
    return cited + [
        (p.segment_id, p.block_type, p.text)
        for p in doc_passages
        if p.segment_id not in seen
        and (p.block_type in wanted or (kind == "decision" and states_own_ruling(p.block_type, p.text)))
    ]


def section_headings(passages: list) -> dict[str, str]:
    """Segment id -> the heading it stands under ("The grounds of appeal", "Discussion"), over passages
    (`retrieval.hybrid.Passage`s) in document order: a question worded like a heading asks about the
    section under it ("What were the grounds of appeal?")."""
    out: dict[str, str] = {}
    heading, doc = "", None
    for p in passages:
        if p.doc_id != doc:
            heading, doc = "", p.doc_id
        short = len(p.text.split()) <= HEADING_MAX_WORDS
        if short and is_heading(p.text) and p.block_type not in NON_ANSWER_BLOCKS:
            heading = p.text.strip()
        elif heading:
            out[p.segment_id] = heading
    return out


def owns_view(sentence: str) -> bool:
    """A sentence in which the judge says what he or she thinks ("I do not think it is correct …", "In my
    judgment …"), not a quotation; in Chinese, where the court answers a point (经查…, 本院认为…)."""
    if HAN.search(sentence):
        return court_answers(sentence)
    return voiced(sentence) and bool(_OWN_VIEW.search(sentence))


def voiced(sentence: str) -> bool:
    """A sentence in which the court states its own view (`_VOICE`), not a quotation; in Chinese, one that
    draws a conclusion from a reason (`_ZH_BECAUSE`)."""
    if HAN.search(sentence):
        return bool(_ZH_BECAUSE.search(sentence))
    return not (_QUOTED.search(sentence) or _closes_quote(sentence)) and bool(_VOICE.search(sentence))


def _closes_quote(sentence: str) -> bool:
    """Ends a quotation opened in an earlier sentence: a close quote with no open quote of its own."""
    s = sentence.rstrip(" .;")
    unbalanced = s.count("”") > s.count("“") or s.count('"') % 2 == 1
    return s.endswith(("”", '"')) and unbalanced


def _fitting(
    kind: str, question: str, block_type: str, text: str, below: bool
) -> Iterator[tuple[int, int, str, float]]:
    """(start, end, sentence, fit) of a passage's sentences: `fits_kind`, a sentence after the court's answer
    to a point going on with it; where the question asks the reasons of the court below (`below`), the
    sentences from where the passage reports them (一审法院认为，…) fit instead."""
    answering = reported = False
    for a, b in sentences(text):
        s = text[a:b]
        if below:
            reported = reported or bool(_ZH_BELOW_VIEW.search(s))
            fit = float(reported and block_type not in DECISION_BLOCKS)
        else:
            fit = fits_kind(kind, block_type, s, question, answering)
            answering = answering or court_answers(s)
        yield a, b, s, fit


def rank_sentences(
    question: str,
    passages: list[tuple[str, str, str]],
    kind: str,
    similar: Callable[[list[str]], np.ndarray] | None = None,
    headings: dict[str, str] | None = None,
    similarity_weight: float = SIMILARITY_WEIGHT,
) -> list[ScoredSentence]:
    """Sentences of (segment_id, block_type, text) passages, best first, for a question of `kind`;
    `similar` (retrieval.ask_models.sentence_similarity) gives each sentence's cosine with the question,
    `similarity_weight` its share of the relevance; a sentence holds the terms of its passage's heading
    (`section_headings`) too."""
    q_terms = content_terms(question) - (_DECISION_TERMS if kind == "decision" else set())
    decision = kind in ("decision", "ruling below")
    skip = NON_DECISION_BLOCKS if decision else NON_ANSWER_BLOCKS if kind != "span" else ()
    # "一审为什么…" of a judgment reporting the reasons below (一审法院认为…) asks those
    below = kind == "reason" and bool(_ZH_ASKS_BELOW.search(question)) and not _ZH_ASKS_OWN.search(question)
    below = below and any(_ZH_BELOW_VIEW.search(text) for _, _, text in passages)
    cands = []
    for sid, btype, text in passages:
        if btype in skip:
            continue
        under = {t for t, _, _ in term_spans((headings or {}).get(sid, ""))}  # its heading's terms
        for a, b, s, fit in _fitting(kind, question, btype, text, below):
            # 依照…之规定，判决如下： ends in a colon; "AFFIRMED." is too short for a sentence
            if is_sentence(s) or (kind == "law" and fit) or (decision and fit and states_ruling(s)):
                held = {t for t, _, _ in term_spans(s)} | under | instances(s)
                cands.append((sid, btype, a, b, s, held, fit))
    if not cands:
        return []
    n = len(cands)
    idf = {t: math.log(1 + n / (1 + sum(t in c[5] for c in cands))) for t in q_terms}
    total = sum(idf.values()) or 1.0
    sims = None if similar is None else [float(x) for x in similar([c[4] for c in cands])]
    out = []
    for i, (sid, btype, a, b, s, terms, fit) in enumerate(cands):
        overlap = sum(w for t, w in idf.items() if t in terms) / total
        relevance = overlap
        if sims is not None:
            relevance = (1 - similarity_weight) * overlap + similarity_weight * max(sims[i], 0.0)
        out.append(
            ScoredSentence(
                sid,
                btype,
                a,
                b,
                s,
                round(overlap, 4),
                None if sims is None else round(sims[i], 4),
                relevance + BLOCK_PRIOR * fit + (VOICE_PRIOR * voiced(s) if kind == "reason" else 0.0),
            )
        )
    out.sort(key=lambda x: -x.score)  # stable: ties keep retrieval order
    return out
