"""Shaping what `ask` says: whole phrases instead of reader fragments, sentence answers for questions whose
answer is a sentence, and an honest "not found" below a confidence threshold chosen on validation data.

`question_kind(q)` tells span questions from sentence questions (decisions, what a court below decided,
what a party argued or asked for, reasons, the law applied, what a text provides, a patent's claim).
`complete_span` grows a reader span to its clause (or sentence, for a question asking several things; or its
line, for part of a heading) when the span alone is not a phrase. `fits_question` drops reader spans that
cannot be an answer. The sentences a sentence question is answered with are ranked by
retrieval.sentence_rank.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from retrieval.chinese_spans import asks_law, zh_candidates, zh_span_kind
from retrieval.claim_questions import asked_claim
from retrieval.english_shapes import asks_count, is_money
from retrieval.reader.questions import POLAR_TYPES, answer_types
from retrieval.reader.runtime import term_spans
from retrieval.sides import asks_argument, asks_ruling_below
from retrieval.text import HAN, ZH_WHETHER, stopwords

# P(answer type) of the reader's best answer below which `ask` says it found no confident answer.
# Chosen by `retrieval.eval.metrics.choose_threshold` (max F1 of answer-vs-abstain, an answer counting as
# right at char-F1 >= 0.5) on the CJRC validation contexts (`retrieval.reader.train.is_validation`, inside
# the training split, never the held-apart test split): `python benchmarks/ask_threshold.py --contexts 86`
# read all 86 of them (516 questions, 387 answerable) with the end-to-end reader of the fourth sitting
# (sha c0d6391b) deciding with its no-answer margin (retrieval.reader.runtime.NONE_MARGINS) and its yes-no
# decider (data/models/polar.json) on 2026-12-07 and chose 0.411 (F1 0.579, as answering whenever the
# reader does); with the sitting-2 reader it had chosen 0.412 (F1 0.585; before the decider read bigrams
# 0.424, without the margin 0.406 at F1 0.544). The reader's own NONE already abstains
# on most unanswerable CJRC questions, so the gain there is small; the threshold matters more over
# retrieved segments, where no segment may hold the answer.
ANSWER_THRESHOLD = 0.41

MIN_SPAN_CHARS = 3  # a CJK span shorter than this is a lone verb or function word ("判处"), not an answer
# unless it holds a number: "8500元", "50万元" are whole answers
MIN_SPAN_WORDS = 2  # the same for English: one word alone is grown to its clause unless it is a name/number
HEADING_MAX_WORDS = 6  # an English line this short without a full stop is a heading ("The grounds of appeal")

_CLAUSE_END = "，。；：！？,;:!?\n"
_SENTENCE_END = "。；！？!?\n"

_EN_WH = re.compile(r"^\s*(what|why|how|which|on what)\b", re.I)
_EN_DECISION = re.compile(
    r"\b(decide[ds]?|decision|h[eo]ld(ing)?|order(ed)?|outcome|result|rul(e|ed|ing)|conclu(de|ded|sion)|"
    r"dispos(e|ed|al|ition)|judgment|verdict|allow(ed)?|dismiss(ed)?|"
    r"happened to\b.*\b(appeals?|claims?|applications?|petitions?|cases?|orders?))\b",
    re.I,
)
_EN_REASON = re.compile(r"^\s*why\b|\breasons?\b|\bgrounds?\b|\brationale\b|\bon (what|which) basis\b", re.I)
_AND_WHY = re.compile(r"\b(and|but) why\s*\??\s*$", re.I)  # "Did the court give permission, and why?"
# what must be shown, the approach or test to apply: said by a sentence, though it speaks of an order
_EN_TEST = re.compile(
    r"^\s*what (approach|test|principles?|standard)\b|^\s*what (does|do|must|should)\b.*\b(need|have) to "
    r"(show|prove|establish|demonstrate)\b",
    re.I,
)
# where or how a court went wrong is the reasoning that says so
_EN_WRONG = re.compile(
    r"^\s*(where|how|in what (way|respect))\b.*\b((go|goes|went|gone) wrong|err(ed|s)?)\b", re.I
)
# a cause of death, of an accident or a fire (死亡原因是什么) is a fact found, not the court's reasoning
_ZH_REASON = re.compile(r"为什么|为何|为啥|凭什么|理由|(?<![亡故火病])原因|依据")
# the court's view of a point (辩护人认为…，法院怎么看？) is its reasoning too, unless asked whether (有没有…？)
_ZH_VIEW = re.compile(r"(?:怎么|如何|怎样)(?:看|认定|评价|看待)|(?:什么|何种|怎样的?)态度")
# asking what was decided or imposed: 如何判决, 判处什么刑罚, 如何处理 (the disposition of a thing or claim)
_ZH_DECISION = re.compile(
    r"如何判决|怎么判|怎样判|判决结果|判决如何|判了什么|判处(什么|何种)|(什么|何种)刑罚|如何处理|怎么处理|"
    r"如何裁定|裁定结果|(什么|何种)(判决|裁定)|(申请|上诉|诉讼|审理|处理)结果|结果(如何|是什么)"
)
_ZH_WH = re.compile(r"什么|谁|哪|多少|几|何时|怎样|如何")
# asking what a text provides or what follows from it: the answer is a sentence, wherever it stands
_EN_STATEMENT = re.compile(
    r"^\s*(under what|in what circumstances|what happens\b|how (can|could|may|must|shall|is|are|will)\b)|"
    # "How did the couple come to use arbitration?", "What is he suing for?"
    r"^\s*how (did|do|does)\b.*\bcome to\b|\b(su(e|es|ed|ing)|claim(s|ed|ing)?) for\s*\??\s*$|"
    # "What was the issue?", "What is the test for …?", "What was the claim about?"
    r"^\s*what\s+(is|was|are|were)\s+the\s+(\w+\s+){0,2}?(issues?|questions?|tests?|disputes?)\b"
    r"(?!\s+(price|date|number|of\s+(shares|notes)))|^\s*what\s+(is|was|are|were)\b.*\babout\s*\??\s*$|"
    r"^\s*(what|how)\s+(does|do|did|must|may|can|shall|will)\b.*\b(provide|say|state|require|permit|govern|"
    r"apply|applies|treat|define|describe|exclude|cover|prohibit|forbid|grant|impose|mean)\w*\b",
    re.I,
)
_AMOUNT_Q = re.compile(r"\bhow (much|many)\b|\bwhat (amount|sum|percentage)\b|多少|几", re.I)
_ZH_WHO = re.compile(r"谁|何人|哪位|哪一?方")
# what a sum is written with
_ZH_SUM = re.compile(r"人民币|[\d,，.．%％元整约共计余万亿千百十零〇一二三四五六七八九两]")
_NUMBER = re.compile(
    r"\d|[零〇一二三四五六七八九十百千万亿两]|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|half)\b",
    re.I,
)
# what a heading can answer: the court, the judges, the date, the case and its number
_HEADING_Q = re.compile(
    r"\b(court|judges?|justices?|dates?|case|citation|heard|title)\b|法院|法官|审判|案号|日期|标题", re.I
)
_EN_MULTI_WH = re.compile(r"\b(who|what|when|where|which|how much|how many|how long)\b", re.I)


@dataclass
class Citation:
    doc_id: str
    segment_id: str
    block_type: str
    page: int | None
    bbox: list[float] | None  # of the segment's block: top-left origin, PDF points
    score: float  # reciprocal-rank-fusion score over the search arms (higher is better)
    text: str


@dataclass
class Evidence:
    """The sentence an answer rests on (or, with no confident answer, the best sentence found)."""

    sentence: str
    segment_id: str
    page: int | None
    bbox: list[float] | None  # of the sentence's block: top-left origin, PDF points


@dataclass
class Answer:
    question: str
    answer: str  # the answer text: a phrase, a sentence, "YES", "NO", or "none" (no confident answer)
    answer_type: str  # span / yes / no / sentence / clause / field (a patent's front page) / none
    # span/yes/no: the reader's P(answer type), or for a typed English span (retrieval.english_spans) the
    # relevance of its line to the question; sentence: (question-term overlap + block-type prior) / 2;
    # clause: the clause head's probability of its likeliest sentence of the category
    confidence: float | None
    evidence: Evidence | None
    # the reader's P(answer type) in its best segment (the clause head's probability for a clause question),
    # shown even when withheld
    answer_score: float | None
    answer_segment: str | None  # the cited segment the answer was read from
    citations: list[Citation]
    arms: list[str]
    reader: str | None  # the reader checkpoint, None when no reader exists
    notes: list[str] = field(default_factory=list)
    more_evidence: list[Evidence] = field(default_factory=list)  # the next-best sentences, best first

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Reading:
    """The reader's most confident answer over the cited segments."""

    label: str  # SPAN, YES or NO
    text: str
    confidence: float  # P(label)
    segment_id: str
    start: int  # characters of the span in the segment's text (the whole text for YES/NO)
    end: int
    share: float  # share of the question's terms in the answer's sentence (retrieval.answer.term_share)
    parts: tuple[str, ...] = ()  # a question read in parts: the span answering each (start, end: their hull)


def question_kind(question: str) -> str:
    """ "law" (the law applied), "decision", "ruling below" (what a court below decided), "argument" (what a
    party argued or asked for), "reason", "statement" or "patent claim" (a numbered claim's text; the
    answer is a sentence), else "span"."""
    if asked_claim(question) is not None:
        return "patent claim"
    if asks_law(question):
        return "law"
    if _ZH_DECISION.search(question):
        return "decision"
    if asks_argument(question):
        return "argument"
    viewed = _ZH_VIEW.search(question) and not ZH_WHETHER.search(question)
    if _ZH_REASON.search(question) or viewed or (_EN_WH.match(question) and _EN_REASON.search(question)):
        return "reason"
    if _EN_WRONG.match(question) or _AND_WHY.search(question):
        return "reason"
    if _EN_TEST.search(question):
        return "statement"
    if _EN_WH.match(question) and _EN_DECISION.search(question):
        return "ruling below" if asks_ruling_below(question) else "decision"
    if _EN_STATEMENT.search(question):
        return "statement"
    return "span"


def evidence_kind(question: str, kind: str) -> str:
    """The kind a question's sentences are ranked as: an English yes-no question about a point ("Was the
    claim statute-barred?") by the court's reasoning on it, as a why-question is (whatever the reader
    answers, that sentence is its evidence); any other by its own kind."""
    polar = kind == "span" and not HAN.search(question) and answer_types(question) == POLAR_TYPES
    return "reason" if polar else kind


# "When the Act was passed, what …": a leading clause, not a second thing asked
_EN_LEADING_WHEN = re.compile(r"^\s*when\b[^?,]*,(?=\s*(what|which|who|where|how)\b)", re.I)


def asks_several(question: str) -> bool:
    """A question asking two things at once (被告人犯什么罪，判处什么刑罚？): its answer is a sentence's worth."""
    question = _EN_LEADING_WHEN.sub("", question)
    return len(_ZH_WH.findall(question)) + len(_EN_MULTI_WH.findall(question)) >= 2


def is_wh_question(question: str) -> bool:
    """Asks for a thing (who/what/多少/什么…), so a bare YES/NO is never its answer."""
    return bool(_EN_MULTI_WH.search(question) or _ZH_WH.search(question) or _EN_WH.match(question))


def fits_question(question: str, span: str, block_type: str) -> bool:
    """Whether a reader span can answer the question at all: never words of a heading ("IN THE COURT",
    "AFFILIATE OFFICE AGREEMENT") unless the question asks what a heading says, never a span without a
    number for a question asking how much or how many (nor a sum of money for one counting things), nor a
    bare sum for one asking who (案件受理费由谁负担), nor one without a phrase of the type a Chinese question
    names (哪个法院, 多久, 案号, 什么程序)."""
    if block_type == "HEADER" and not _HEADING_Q.search(question):
        return False
    if _ZH_WHO.search(question) and not _ZH_SUM.sub("", span).strip():
        return False
    # an office's holder is named without the office, a date may be relative (同月18日, 次日4时许)
    if (kind := HAN.search(question) and zh_span_kind(question)) and kind not in ("office", "date"):
        return bool(zh_candidates(span, kind))
    if asks_count(question) and is_money(span):
        return False  # a count of things asked, a sum of money read
    return not _AMOUNT_Q.search(question) or bool(_NUMBER.search(span))


def term_share(question: str, sentence: str) -> float:
    """Share of the question's content terms (BM25 terms) found in the sentence, in [0, 1]. A Chinese term
    counts where the sentence holds its characters: jieba cuts a name or verb differently in another context
    (刘汉|月 in the question, 刘汉月|分得 in the sentence)."""
    q = {t for t, _, _ in term_spans(question)}
    if HAN.search(question):
        return sum(t in sentence for t in q) / len(q) if q else 0.0
    return len(q & {t for t, _, _ in term_spans(sentence)}) / len(q) if q else 0.0


def _is_fragment(span: str) -> bool:
    words = span.split()
    if HAN.search(span):
        return len(HAN.findall(span)) < MIN_SPAN_CHARS and not any(ch.isdigit() for ch in span)
    if not words:
        return True
    lone = len(words) < MIN_SPAN_WORDS and not (words[0][:1].isupper() or words[0][:1].isdigit())
    return lone or all(w.lower() in stopwords() for w in words)


def _grow(text: str, a: int, b: int, ends: str) -> tuple[int, int]:
    while a > 0 and text[a - 1] not in ends:
        a -= 1
    while b < len(text) and text[b] not in ends:
        b += 1
    if b < len(text) and text[b] in "。.!?！？" and ends is _SENTENCE_END:
        b += 1  # a whole sentence keeps its full stop
    while a < b and text[a].isspace():
        a += 1
    return a, b


def complete_span(text: str, a: int, b: int, question: str) -> tuple[int, int]:
    """[a, b) of `text` grown to a whole phrase: the enclosing sentence for a question asking several things,
    the enclosing clause for a fragment (a lone verb, a function word), else to whole words."""
    while (
        a > 0 and text[a - 1].isascii() and text[a - 1].isalnum() and text[a].isascii() and text[a].isalnum()
    ):
        a -= 1  # a token boundary inside an English word ("Assign|ee")
    while (
        b < len(text)
        and text[b].isascii()
        and text[b].isalnum()
        and text[b - 1].isascii()
        and text[b - 1].isalnum()
    ):
        b += 1
    if asks_several(question):
        return _grow(text, a, b, _SENTENCE_END)
    if is_header_line(text[a:b]):
        return _grow(text, a, b, "\n")  # part of a heading ("IN THE COURT"): the whole heading line
    if _is_fragment(text[a:b]):
        return _grow(text, a, b, _CLAUSE_END)
    return a, _closed(text, a, b)


BRACKET_REACH = 24  # how far a phrase's open bracket may look for its close: 265张（26500元）


def _closed(text: str, a: int, b: int) -> int:
    """The end of [a, b) moved past the close of a bracket the phrase opens and leaves open, where it comes
    soon after ("40张（4000元" → "40张（4000元）")."""
    for left, right in ("（）", "()"):
        if text.count(left, a, b) > text.count(right, a, b):
            close = text.find(right, b, b + BRACKET_REACH)
            if close >= 0:
                return close + 1
    return b


def is_header_line(text: str) -> bool:
    """An all-caps line ("IN THE COURT OF APPEAL (CIVIL DIVISION)"): a heading, never an answer."""
    letters = [c for c in text if c.isalpha() and c.isascii()]
    return len(letters) >= 4 and all(c.isupper() for c in letters)


def is_heading(text: str) -> bool:
    """A line that introduces rather than says: all capitals, ending in a colon ("Lady Justice Okonjo:",
    "判决如下："), or a few English words without a full stop ("The grounds of appeal")."""
    s = text.strip()
    if is_header_line(s) or s.endswith((":", "：")):
        return True
    return not HAN.search(s) and len(s.split()) <= HEADING_MAX_WORDS and not s.endswith((".", "!", "?", ";"))
