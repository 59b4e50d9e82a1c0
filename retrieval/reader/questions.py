"""What a question's form tells the reader before it reads: the answer types it allows (a yes-no question
is answered YES, NO or not at all, any other one with a span or not at all), and the parts of a question
that asks for several things at once, which the one-span reader answers one by one."""

from __future__ import annotations

import re

from retrieval.reader.polar import ASKING_ZH, POLAR_LABELS
from retrieval.text import HAN

LABELS = ("SPAN", "YES", "NO", "NONE")
POLAR_TYPES = frozenset(POLAR_LABELS)
SPAN_TYPES = frozenset({"SPAN", "NONE"})

# 是否… / 有没有… / …吗？ / "Did the court …?": a question answered yes or no. In CJRC's questions the form
# decides the answer type: outside the held-apart split, 3 of 4,002 other questions have a YES/NO answer
# and 1 of 707 yes-no questions a span.
_POLAR_ZH = re.compile(rf"{ASKING_ZH}|吗\s*[？?]?\s*$")
# the auxiliaries an English yes-no question opens with, and a clause's verb may be
_EN_AUX_WORDS = r"(?:is|are|was|were|did|does|do|has|have|had|can|could|will|would|should|may|must|shall)"
_POLAR_EN = re.compile(rf"^\s*{_EN_AUX_WORDS}\b", re.I)
_WH = re.compile(r"什么|谁|哪|多少|几|何时|怎样|如何|\b(who|what|when|where|which|why|how)\b", re.I)


# 毒品的重量及其交到了哪里？ / 签订协议书的时间以及原告缴纳的费用？: two things asked at once, joined by
# 及 (及其), 以及 or 并且; not the 及 of 及时, 涉及, 危及 …
_JOIN = re.compile(r"以及|并且|(?<![涉危波不来顾普触论])及其?(?![时格早])")
MIN_PART_CHARS = 2  # a shorter piece is no question of its own


def question_parts(question: str) -> list[str]:
    """The parts of a question asking for two things or more at once, each to be asked alone; [] for a
    question asking for one thing, and for a yes-no question (its answer is one YES or NO)."""
    if answer_types(question) != SPAN_TYPES:
        return []
    parts = [p.strip(" ，,、") for p in _JOIN.split(question.strip().rstrip("？?。 "))]
    parts = [p for p in parts if len(p) >= MIN_PART_CHARS]
    return parts if len(parts) >= 2 else []


# "…, and what did the policing cost?", "… and until when was that leave valid?": a later English clause
# opening with what it asks (after a preposition, perhaps)
_EN_AND_WH = re.compile(
    r",?\s+and\s+(?=(?:(?:in|on|at|by|for|from|to|through|during|until|under|with|before|after)\s+)?"
    r"(?:what|which|who|whom|whose|when|where|how)\b)",
    re.I,
)
_EN_AUX = re.compile(rf"\b{_EN_AUX_WORDS}\b", re.I)
BARE_WORDS = 4  # "through which online platform": a clause this short without a verb borrows one


def english_clauses(question: str) -> list[str]:
    """The clauses of an English question that each ask something, each whole: "When did the landlord go
    into administration, and when did GR acquire the lease?" → both; a clause of a few words without a verb
    takes the rest of the other ("Before which judge, and on what date, was the summons heard?" → "Before
    which judge was the summons heard?", "on what date was the summons heard?"; "During what period did JSC
    sell the bundles, and through which platform?" → "… through which platform did JSC sell the
    bundles?"); [] for one that asks one thing."""
    parts = [p.strip(" ,") for p in _EN_AND_WH.split(question.strip().rstrip("? "))]
    if len(parts) != 2 or not all(_WH.search(p) for p in parts):
        return []
    first, second = parts
    bare = [len(p.split()) <= BARE_WORDS and not _EN_AUX.search(p) for p in parts]
    if bare[0] and "," in second:  # the shared rest stands after the second's own words
        second, rest = (x.strip() for x in second.split(",", 1))
        first, second = f"{first} {rest}", f"{second} {rest}"
    elif bare[0] and (aux := _EN_AUX.search(second)):  # "At what time and on what date was it fixed?"
        first = f"{first} {second[aux.start() :]}"
    elif bare[1]:  # "… and when?" is whole only with the other's verb and what follows it
        if not (aux := _EN_AUX.search(first)):
            return []
        second = f"{second} {first[aux.start() :]}"
    return [f"{first}?", f"{second}?"]


def asked_clauses(question: str) -> list[str]:
    """The clauses of a question that each ask something (哪个法院审的，案号是多少？ or 告的是哪个单位？
    第三人又是谁？ → both; English ones by `english_clauses`); [] for one that asks one thing."""
    if not HAN.search(question):
        return english_clauses(question)
    clauses = []
    for piece in re.split(r"[，,；;？?]", question.rstrip("？? ")):
        listed = piece.split("、")  # 花了多少钱、买了多少张 asks two things; 加上保全费、公告费一共多少钱 one
        clauses += listed if all(_WH.search(x) for x in listed) else [piece]
    clauses = [c for c in clauses if _WH.search(c)]
    return clauses if len(clauses) >= 2 else []


def before_asked(clause: str) -> str:
    """The words of a clause before what it asks (三个被告人答应赔于某 of 三个被告人答应赔于某多少钱): what a
    later clause without a subject of its own (实际已经付了多少) is about."""
    return clause[: m.start()] if (m := _WH.search(clause)) else clause


def answer_types(question: str) -> frozenset[str]:
    """The answer types the question's form allows: YES, NO or none for a yes-no question, a span or none
    for any other, every type for one that asks both at once (是否…，判处什么刑罚？)."""
    polar = bool(_POLAR_ZH.search(question) or _POLAR_EN.match(question))
    if polar and _WH.search(question):
        return frozenset(LABELS)
    return POLAR_TYPES if polar else SPAN_TYPES


def answer_label(golds: list[str], impossible: bool) -> str:
    """The answer type of a SQuAD-2.0/CJRC question from its gold texts."""
    if impossible or not golds or not golds[0]:
        return "NONE"
    return golds[0] if golds[0] in ("YES", "NO") else "SPAN"
