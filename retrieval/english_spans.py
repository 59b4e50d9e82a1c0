"""Typed answers to English factual questions: who, when, where, how much, how long, on what condition.

The shipped reader learned its spans from Chinese (CJRC) and from CUAD's clause categories, never from
English free questions, so for "Who represented the appellant?" it finds no span it trusts. Such a question
names the type of its answer, and that type has a shape in the text: a titled or capitalised name, a date,
an amount of money, a number of days. `span_kind(question)` reads the type; `typed_span` finds the phrases of
that shape in the passages given (`ldx ask`'s cited ones and, from `head_passages`, the document's head and
signature lines) and answers with the one that stands closest to the question's words in the line or
sentence most relevant to it. These are rules, written against benchmarks/data/english_spans_dev.json and
revised against english_spans_test.json; benchmarks/english_spans.py measures them on a held-out set.
A Chinese question's type and phrases are read by retrieval/chinese_spans.py and searched for the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from retrieval.answer import SIMILARITY_WEIGHT
from retrieval.chinese_spans import ZH_ROLE_LINES, owner_bonus, zh_candidates, zh_span_kind
from retrieval.reader.runtime import term_spans
from retrieval.text import HAN, non_overlapping, sentences, stopwords

CONTEXT_WEIGHT = 0.5  # a unit is at least this share as relevant as the sentence before it in its passage
CLOSE_CHARS = 40  # a candidate this many characters from the nearest question term counts half as close
# Who sat, who appeared for whom, when it was heard, who signed: a judgment or contract states these in its
# head (title lines, the parties, counsel) or its signature block, lines a search seldom ranks for a question
# worded otherwise; for these kinds they are read beside the cited passages.
ASKS_THE_HEAD = frozenset({"person", "organisation", "date", "place", "court", "office", "case number"})
HEAD_BLOCKS = frozenset({"HEADER", "PARTIES", "SIGNATURE"})
OPENING_SEGMENTS = 20  # an opinion parsed without a HEADER block: its first segments
# Lines whose role in a legal document answers a kind of who-question however it is worded: counsel ("X
# (instructed by Y) for the Appellant", "ARGUED: X … for Appellant"), the judgment's author ("Lord Justice
# Floyd:", "Opinion by Judge Callahan"), a contract's signatory ("By: /s/ X", "Name: X").
_ROLE_LINES = [
    (
        re.compile(r"\b(represent|appear|counsel|barrister|solicitor|attorney|lawyer|argued|acted)", re.I),
        re.compile(
            r"\(instructed by|\(argued\)|\bargued:|\bfor (the )?(first |second )?(appellant|respondent|claimant|"
            r"defendant|plaintiff|petitioner|appellee|applicant)s?\b",
            re.I,
        ),
    ),
    (
        re.compile(r"\b(wrote|written|gave|give|deliver\w*|author\w*)\b.*\b(judgment|opinion)\b", re.I),
        re.compile(
            r"^[^\n.;]{3,60}:\s*$|\bopinion by\b|^\s*[A-Z]+, (Chief |Circuit |District )*Judge[.:]",
            re.I | re.M,
        ),
    ),
    (re.compile(r"\bsign(ed|s|atory)?\b", re.I), re.compile(r"^\s*(by|name)\s*:|/s/", re.I)),
    *ZH_ROLE_LINES,
]
_COUNSEL_END = re.compile(
    r"\bfor the (first |second )?(appellant|respondent|claimant|defendant|applicant)s?\b(?=[^\S\n]+[A-Z])",
    re.I,
)
ROLE_LINE_BONUS = 1.0  # added to the relevance of such a line for such a question
# kinds whose answer is a name: one that repeats a name the question gives is the question's, not its answer
_NAMED = frozenset({"person", "name", "organisation", "place"})

# --- what a question asks for; tried in order, the first match wins ---------------------------------------
_Q = [
    ("condition", r"^\s*(in (what|which) (case|cases|event)|on what conditions?|subject to what)\b"),
    ("date", r"^\s*(on |by )?(what|which) (date|day|year)\b|^\s*in what year\b|\bwhat date\b"),
    ("date", r"^\s*when (was|were|did|is|are|has|had)\b"),
    ("date", r"^\s*when\b.*\b(end|ends|expire|expires|begin|begins|start|starts|commence|commences|due)\b"),
    ("condition", r"^\s*when\b"),
    ("duration", r"\bhow long\b|\bhow many (days|weeks|months|years|hours|minutes)\b"),
    ("duration", r"\b(what|which) (\w+ )?(period|term|length|duration)\b|\bwithin what (time|period)\b"),
    (
        "amount",
        r"^\s*how (much|many)\b|\b(what|which) ((is|was|are|were) the )?(\w+ ){0,2}"
        r"(amount|sum|share|percentage|proportion|fees?|price|rate|cost|fine|salary|compensation)\b",
    ),
    (
        "place",
        r"^\s*where\b|\b(what|which) (city|town|state|country|county|place|location|venue)\b|"
        r"\b(what|which|whose) (country's |state's )?laws?\b(?! firm)",
    ),
    (
        "organisation",
        r"\b(what|which) (\w+ )?(company|firm|court|tribunal|bank|insurer|entity|corporation|employer|"
        r"hospital|agency|authority|university|school)\b",
    ),
    ("person", r"^\s*(who|whom)\b|\bwho\b"),
    (
        "person",
        r"\b(what|which) (\w+ )?(judges?|justices?|lawyers?|attorneys?|barristers?|counsel|solicitors?|persons?|"
        r"officers?|arbitrators?|witness|signator(y|ies)|prosecutors?|defenders?|trustees?|part(y|ies))\b",
    ),
]
_QUESTION_KINDS = [(kind, re.compile(p, re.I)) for kind, p in _Q]

# --- the shapes of answers --------------------------------------------------------------------------------
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan\.|Feb\.|Mar\.|Apr\.|Jun\.|Jul\.|Aug\.|Sept?\.|Oct\.|Nov\.|Dec\.|JANUARY|FEBRUARY|MARCH|APRIL|"
    r"MAY|JUNE|JULY|AUGUST|SEPTEMBER|OCTOBER|NOVEMBER|DECEMBER)"
)
_DATE = (
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s+day\s+of)?\s+{_MONTH},?\s+\d{{4}}"
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|{_MONTH}\s+\d{{4}}"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b)"
)
_NUMWORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|"
    r"million|billion)"
)
_PAREN = (
    r"(?:\s*\(\s*(?:US)?[$£€]?\d[\d,.]*\s*%?\s*[A-Za-z]{0,3}\s*\))?"  # "five (5)", "thirty percent (30%)"
)
_NUM = rf"(?:\d[\d,]*(?:\.\d+)?|\b(?i:{_NUMWORD})(?:(?:[\s-]+|\s+and\s+)(?i:{_NUMWORD}))*\b){_PAREN}"
_SCALE = r"(?:\s+(?:million|billion|thousand|m|bn)\b)?"
_QUALIFIER = (
    r"(?:(?:approximately|about|around|some|at least|at most|not less than|not more than|no less than|"
    r"no more than|up to|over|just over|just under|more than|less than|a minimum of|a maximum of|nearly|"
    r"almost)\s+)?"
)
_CURRENCY = r"(?:US\$|USD\s?|\$|£|€|GBP\s?|EUR\s?)"
_UNIT_OF_TIME = (
    r"(?:business |calendar |working |consecutive )?(?:days?|weeks?|months?|years?|hours?|minutes?)"
)
_SHAPES = {
    "date": [_DATE],
    "duration": [
        rf"{_DATE}\s+(?:to|through|until)\s+{_DATE}",
        rf"{_QUALIFIER}{_NUM}(?:\s+(?:to|or|and)\s+{_NUM})?(?:[\s-]+){_UNIT_OF_TIME}{_PAREN}",
    ],
    "amount": [
        rf"{_QUALIFIER}{_CURRENCY}\d[\d,]*(?:\.\d+)?{_SCALE}{_PAREN}",
        rf"{_QUALIFIER}{_NUM}{_SCALE}\s+(?:US\s+)?(?:dollars|pounds|euros|rupees){_PAREN}",
        rf"{_QUALIFIER}{_NUM}\s*(?:%|percent\b|per cent\b){_PAREN}",
    ],
    "count": [rf"{_QUALIFIER}{_NUM}{_SCALE}\s+[a-z]+"],  # "35 hours", "seven thousand (7000) acres"
    "condition": [
        r"\b(?i:if|when|where|whenever|once|upon|unless|provided that|in the event(?: that)?|so long as|"
        r"as long as|on condition that)\b.+?(?=,\s|;|:|\.(?:\s|$)|$)"
    ],
}
_SP = r"[^\S\n]+"  # spaces within a line: a name never runs on into the next line
_SP0 = r"[^\S\n]*"
# a capitalised word (never cut inside one: "McLean", not "Mc"), hyphenated ("T-Mobile"), or an initial
_NAME = r"(?:(?:Mc|O')[A-Z][a-z]+|[A-Z](?:[a-z'’]+|(?=-))(?:-[A-Z]?[a-z'’]+)*(?![A-Za-z])|[A-Z]\.)"
_CAPS = r"[A-Z][A-Z'’\-]+"
_TITLE = (
    r"(?:Mr|Mrs|Ms|Miss|Dr|Sir|Dame|Lord|Lady|Judge|Justice|Professor|Hon\.|Honorable|Lord Justice|"
    r"Lady Justice|Mr Justice|Mrs Justice|Chief Justice|Master)\.?"
)
_ORG_END = (
    r"(?:Inc\.?|Ltd\.?|Limited|LLP|LLC|L\.L\.C\.|PLC|plc|Corporation|Corp\.?|Company|Co\.|Bank|Council|"
    r"Authority|N\.V\.|B\.V\.|S\.A\.|S\.L\.|S\.p\.A\.|GmbH|AG|L\.P\.|LP|Pty|INC\.?|LTD\.?|LIMITED|"
    r"CORPORATION)(?!\w)"
)
_SHAPES["person"] = [
    rf"\b{_TITLE}{_SP}{_NAME}(?:{_SP}{_NAME}){{0,3}}(?:,?{_SP}(?:QC|KC))?",
    rf"\b(?:LORD|LADY|MR|MRS) JUSTICE{_SP}{_CAPS}(?:{_SP}{_CAPS})?|\bSIR{_SP}{_CAPS}{_SP}{_CAPS}",
    rf"\b(?:{_CAPS}|{_NAME})(?:{_SP}(?:{_CAPS}|{_NAME})){{0,2}}(?:,?{_SP}(?:and{_SP})?{_CAPS}){{0,4}},{_SP}"
    rf"(?:Chief{_SP}|Senior{_SP})?(?:Circuit|District|Magistrate|Bankruptcy)?{_SP0}Judges?",
]
# capitalised words without a title: a name, or a firm's ("Coldharbour Partners")
_SHAPES["name"] = [rf"\b{_NAME}(?:{_SP}{_NAME}){{1,3}}(?:,?{_SP}(?:QC|KC|Esq\.?|Jr\.?))?"]
_SHAPES["organisation"] = [
    rf"\b(?:{_NAME}|{_CAPS})(?:(?:{_SP}|{_SP0},{_SP0}|{_SP}&{_SP}|{_SP}and{_SP}|{_SP}of{_SP})(?:{_NAME}|{_CAPS}))*,?{_SP}{_ORG_END}",
    rf"\b(?:the{_SP})?(?:{_NAME}{_SP})*Court(?:{_SP}(?:of|for|at|in){_SP}(?:the{_SP})?{_NAME}(?:{_SP}{_NAME})?)*",
    rf"\b(?:(?!(?:ON|FROM|THE|IN|OF|AT|TO|AND|APPEAL)\b){_CAPS}{_SP}){{0,3}}COURT(?:{_SP}(?:OF|FOR|AT|IN){_SP}(?:THE{_SP})?{_CAPS}(?:{_SP}{_CAPS})?)*",
]
_SHAPES["place"] = [
    rf"(?:(?<=\b(?:in|at|to|of) )|(?<=—)|(?<=– ))(?:the{_SP})?{_NAME}(?:{_SP}(?:of{_SP})?{_NAME}){{0,3}}"
    rf"(?:,{_SP}{_NAME}(?:{_SP}{_NAME}){{0,2}})?(?:{_SP}\([A-Z]{{2,4}}\))?",
]
# a party may be a company: who-questions take organisations too, a person first where a line has both
_TAKES = {
    "person": ("person", "name", "organisation"),
    "organisation": ("organisation", "name"),  # "Bradford Royal Infirmary": a body without a suffix
    "amount": ("amount", "count"),  # money and shares first, then a number of anything
}
OTHER_SHAPE_WEIGHT = 0.6
_PATTERNS = {kind: [re.compile(p) for p in ps] for kind, ps in _SHAPES.items()}
_DETERMINER = re.compile(r"\b(the|this|that|such|any|each|its|their|our|your|a|an)[^\S\n]+$", re.I)
_OPENERS = frozenset("the this that these those in on at for of by and or but a an it if when where".split())
# words a name may follow on its line ("Appellant Ms X", "Before Sir Y"), cut from a person's front
_LEADERS = _OPENERS | frozenset(
    "appellant appellants respondent respondents claimant claimants defendant defendants plaintiff "
    "plaintiffs petitioner petitioners counsel before between judgment opinion".split()
)
# capitalised words that start sentences or name roles, not people
_NOT_NAMES = frozenset(
    "the this that these those in on at for of by and or but a an it its he she they we i if when where "
    "court appeal appellant respondent claimant defendant plaintiff judge justice lord lady agreement party "
    "parties section article clause schedule act state states united district circuit supreme high secretary "
    "company judgment order government department tribunal council board county city law courts assistant "
    "deputy federal public defender attorney general prosecutor solicitor counsel chief senior associate".split()
)


@dataclass(frozen=True)
class TypedSpan:
    kind: str  # what the question asks for: person, organisation, date, amount, duration, place, condition
    text: str
    segment_id: str
    start: int  # characters in the segment's text
    end: int
    unit: str  # the line or sentence it stands in
    relevance: float  # of that unit to the question, in [0, 1] (typed_span says how it is measured)


def span_kind(question: str) -> str | None:
    """What a question asks for, or None (a what-is question, a yes/no one); a Chinese one's kinds are
    retrieval.chinese_spans.ZH_KINDS."""
    if HAN.search(question):
        return zh_span_kind(question)
    return next((kind for kind, pattern in _QUESTION_KINDS if pattern.search(question)), None)


def _is_name(span: str) -> bool:
    """Not a run of capitalised common words ("The Court", "United States"), nor one a sentence opens."""
    words = [w.strip(".,'’").lower() for w in span.split()]
    return words[0] not in _OPENERS and any(len(w) > 1 and w not in _NOT_NAMES for w in words)


def _proper(span: str, lower_words: set[str]) -> bool:
    """Holds a proper noun: a word the passages never write in lower case ("Approved Judgment", "Generic
    Product" are common words capitalised; "Stanley L. Myers" is not), and no title opens it (a place)."""
    words = [w for w in re.findall(r"[A-Za-z][\w’'-]*", span) if w.lower() not in _OPENERS]
    return bool(words) and not re.match(_TITLE, span) and any(w.lower() not in lower_words for w in words)


def candidates(text: str, kind: str, chinese: bool = False) -> list[tuple[int, int, str]]:
    """(start, end, shape) of the phrases of `text` that can answer a `kind` question, longest first where
    they overlap."""
    if chinese:
        return zh_candidates(text, kind)
    found = []
    for shape in _TAKES.get(kind, (kind,)):
        for pattern in _PATTERNS[shape]:
            for m in pattern.finditer(text):
                a, b = m.span()
                while b > a and text[b - 1] in " ,":
                    b -= 1
                if shape in ("person", "name"):
                    while (lead := re.match(r"(\S+)[^\S\n]+", text[a:b])) and lead[1].lower() in _LEADERS:
                        a += lead.end()
                    if not _is_name(text[a:b]) or (shape == "name" and len(text[a:b].split()) < 2):
                        continue  # common words, or one word left once "In" is cut ("In August")
                    if shape == "name" and _DETERMINER.search(text[:a]):
                        continue  # "the Effective Date", "the United Kingdom": a defined term or a place
                if shape == "count" and text[a:b].split()[-1] in stopwords():
                    continue  # "2 of": a number, not a count of anything
                if shape == "organisation" and len(text[a:b].split()) <= 2 and _DETERMINER.search(text[:a]):
                    continue  # "an Affiliated Company", "the Bank": a defined term, not a name
                found.append((a, b, shape))
    return non_overlapping(found)


def _units(text: str) -> list[tuple[int, int]]:
    """The passage's lines, each cut into sentences: a header line ("Ms X KC for the Appellant") stands
    alone, also where a PDF's header block reads as one line (cut after each "for the <party>")."""
    out = []
    for m in re.finditer(r"[^\n]+", text):
        cuts = [m.start(), *(m.start() + c.end() for c in _COUNSEL_END.finditer(m.group())), m.end()]
        for x, y in zip(cuts, cuts[1:], strict=False):
            out.extend((x + a, x + b) for a, b in sentences(text[x:y]))
    return out


def head_passages(question: str, passages: list) -> list:
    """The passages (retrieval.hybrid.Passage, a document's in order) of its head and signature, and those
    holding a line of the role the question asks about, for a question whose kind such lines often answer;
    none for another."""
    if span_kind(question) not in ASKS_THE_HEAD:
        return []
    roles = [line for asks, line in _ROLE_LINES if asks.search(question)]
    return [
        p
        for i, p in enumerate(passages)
        if i < OPENING_SEGMENTS or p.block_type in HEAD_BLOCKS or any(r.search(p.text) for r in roles)
    ]


def _repeats_the_question(span: str, shape: str, q_words: set[str]) -> bool:
    """A name made of the question's own words ("Who represented Mr Konevod?" → not "Mr Konevod"; "Who
    appeared for Mylan?" → not "Mylan UK Healthcare Limited")."""
    return shape in _NAMED and bool((_words(span) - _NOT_NAMES) & q_words)


def _words(text: str) -> set[str]:
    """Lower-case words, a possessive's "'s" cut off."""
    return {w.lower().removesuffix("’s").removesuffix("'s") for w in re.findall(r"[\w’']+", text)}


def typed_span(
    question: str,
    passages: list[tuple[str, str]],
    similar: Callable[[list[str]], np.ndarray] | None = None,
    min_relevance: float = 0.0,
) -> TypedSpan | None:
    """The answer of the question's type in (segment_id, text) passages (best first), or None when the
    question names no type or no line relevant enough (`min_relevance`, see `_relevance`) has a phrase of
    that type. Of the phrases, the one whose line is most relevant and which stands closest to the
    question's terms answers; a title-less name or another shape than asked (a firm for a who-question)
    counts OTHER_SHAPE_WEIGHT as much."""
    kind = span_kind(question)
    q_terms = {t for t, _, _ in term_spans(question)}
    if kind is None or not q_terms:
        return None
    units = [(sid, text, a, b) for sid, text in passages for a, b in _units(text)]
    chinese = bool(HAN.search(question))
    found = [candidates(text[a:b], kind, chinese) for _, text, a, b in units]
    if not any(found):
        return None
    terms = [term_spans(text[a:b]) for _, text, a, b in units]
    relevance, idf = _relevance(question, q_terms, units, terms, similar)
    if chinese:  # an agent's line under the party the question names
        owned = owner_bonus(question, [(sid, text[a:b]) for sid, text, a, b in units])
        relevance = [r + ROLE_LINE_BONUS * o for r, o in zip(relevance, owned, strict=True)]
    q_words = _words(question)
    lower_words = {w for _, text in passages for w in re.findall(r"\b[a-z][\w’'-]*", text)}
    best, best_score = None, 0.0
    for i, ((sid, text, a, b), phrases) in enumerate(zip(units, found, strict=True)):
        # a line also borrows from the sentence before it: "The judgment was handed down remotely. The date
        # for hand-down is 30 June 2020."
        same = i > 0 and units[i - 1][0] == sid
        rel = max(relevance[i], CONTEXT_WEIGHT * relevance[i - 1] if same else 0.0)
        if min(rel, 1.0) < min_relevance:  # the bar reads what the answer's confidence shows
            continue
        for ca, cb, shape in phrases:
            span = text[a + ca : a + cb]
            if {t for t, _, _ in term_spans(span)} <= q_terms or _repeats_the_question(span, shape, q_words):
                continue  # the question's own words
            if shape in ("name", "place") and not _proper(span, lower_words):
                continue
            score = rel * (1 + _closeness(a + ca, a + cb, terms[i], idf)) - 1e-6 * i
            score *= 1.0 if shape == kind else OTHER_SHAPE_WEIGHT
            if score > best_score:
                best_score = score
                best = TypedSpan(kind, span, sid, a + ca, a + cb, text[a:b].strip(), round(min(rel, 1.0), 4))
    return best


def _relevance(
    question: str, q_terms: set[str], units, terms, similar
) -> tuple[list[float], dict[str, float]]:
    """Each unit's relevance: the idf-weighted share of the question's terms it holds (idf over the units),
    averaged with its cosine with the question when `similar` (retrieval.evidence.SentenceVectors
    .similarity) gives one, plus ROLE_LINE_BONUS for a line of the role the question asks about; and the
    idf."""
    held = [{t for t, _, _ in ts} for ts in terms]
    idf = {t: math.log(1 + len(units) / (1 + sum(t in h for h in held))) for t in q_terms}
    total = sum(idf.values())
    sims = None if similar is None else similar([text[a:b] for _, text, a, b in units])
    roles = [line for asks, line in _ROLE_LINES if asks.search(question)]
    out = []
    for i, (_, text, a, b) in enumerate(units):
        r = sum(w for t, w in idf.items() if t in held[i]) / total
        if sims is not None:
            r = (1 - SIMILARITY_WEIGHT) * r + SIMILARITY_WEIGHT * max(float(sims[i]), 0.0)
        out.append(r + ROLE_LINE_BONUS * any(line.search(text[a:b]) for line in roles))
    return out, idf


def _closeness(start: int, end: int, terms, idf: dict[str, float]) -> float:
    """In [0, 1]: the question's terms near the phrase, each weighed by its idf and by 1 / (1 + gap /
    CLOSE_CHARS) at its nearest occurrence."""
    near: dict[str, float] = {}
    for t, s, e in terms:
        if t in idf:
            gap = max(s - end, start - e, 0)
            near[t] = max(near.get(t, 0.0), 1 / (1 + gap / CLOSE_CHARS))
    return sum(idf[t] * v for t, v in near.items()) / sum(idf.values())
