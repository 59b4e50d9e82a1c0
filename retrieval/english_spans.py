"""Typed answers to English factual questions: who, when, where, how much, how long, on what condition.

The shipped reader learned its spans from Chinese (CJRC) and from CUAD's clause categories, never from
English free questions, so for "Who represented the appellant?" it finds no span it trusts. Such a question
names the type of its answer, and that type has a shape in the text (retrieval/english_shapes.py): a
titled or capitalised name, a date, an amount of money, a number of days, a measurement, a labelled number.
`span_kind(question)` reads the type; `typed_span` finds the phrases of that shape in the passages given
(`ldx ask`'s cited ones and, from `head_passages`, the document's head and signature lines) and answers
with the one that stands closest to the question's words in the line or sentence most relevant to it.
These are rules, written against benchmarks/data/english_spans_dev.json and revised against
english_spans_test.json; benchmarks/english_spans.py measures them on held-out sets (test2, and the heads
of patents and judgments in english_heads.json through benchmarks/ask_questions.py).
A Chinese question's type and phrases are read by retrieval/chinese_spans.py and searched for the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from retrieval.chinese_spans import ZH_ROLE_LINES, owner_bonus, zh_candidates, zh_span_kind
from retrieval.english_kinds import ASKS_NUMBER, en_span_kind
from retrieval.english_shapes import NOT_NAMES, counted_words, en_candidates, is_proper
from retrieval.reader.runtime import content_terms, term_spans
from retrieval.sentence_rank import SIMILARITY_WEIGHT
from retrieval.text import HAN, joined, sentences

CONTEXT_WEIGHT = 0.5  # a unit is at least this share as relevant as the sentence before it in its passage
COUNT_REACH = 4  # the words after a number that may still lead to what is counted ("10 specialist … centres")
CLOSE_CHARS = 40  # a candidate this many characters from the nearest question term counts half as close
# Who sat, who appeared for whom, when it was heard, who signed: a judgment or contract states these in its
# head (title lines, the parties, counsel) or its signature block, lines a search seldom ranks for a question
# worded otherwise; for these kinds they are read beside the cited passages.
ASKS_THE_HEAD = frozenset(
    {"person", "organisation", "date", "place", "court", "office", "case number", "number"}
)
HEAD_BLOCKS = frozenset({"HEADER", "PARTIES", "SIGNATURE"})
OPENING_SEGMENTS = 20  # an opinion parsed without a HEADER block: its first segments
_PARTY = r"(appellant|appellee|respondent|claimant|defendant|plaintiff|petitioner|applicant)"
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
    (  # the parties: named where the head lists them ("MARLOWE FREIGHT LIMITED", "X, Plaintiff-Appellant,")
        re.compile(rf"\bpart(y|ies)\b|^\s*who (is|was|are|were) the {_PARTY}s?\W*$", re.I),
        re.compile(
            rf"^\s*between\b|(?<!\bthe )(?<!\bfor )(?<!\bby )\b{_PARTY}s?[,.]?\s*$|"
            r"\b(LIMITED|LTD|PLC|INC|LLC|LLP|CORPORATION|COMPANY)\.?\s*$",
            re.I | re.M,
        ),
    ),
    (  # the bench: "Before: LORD JUSTICE X", "Before SMITH, JONES and BROWN, Circuit Judges"
        re.compile(r"\b(judges|justices|bench|panel)\b|\bwho (heard|sat|decided)\b", re.I),
        re.compile(
            r"^\s*(before|coram|present)\b|^\s*(LORD|LADY|MR|MRS) JUSTICE\b|\b(Circuit|District) Judges\b",
            re.M,
        ),
    ),
    *ZH_ROLE_LINES,
]
_COUNSEL_END = re.compile(
    r"\bfor the (first |second )?(appellant|respondent|claimant|defendant|applicant)s?\b(?=[^\S\n]+[A-Z])",
    re.I,
)
ROLE_LINE_BONUS = 1.0  # added to the relevance of such a line for such a question
# the type a question names ("Which court heard the appeal?") is no word of its own that an answer may not
# repeat: "COURT OF APPEAL" answers it
_TYPE_TERMS = frozenset("court tribun compani firm bank insur parti judg".split())
# the court an appeal came from, in a judgment's head ("ON APPEAL FROM THE HIGH COURT OF JUSTICE", "Appeal
# from the United States District Court"): the answer to a question about the court below, and only to one
_APPEAL_FROM = re.compile(r"\bappeal(?:ed|s)?\s+from\s+(?:the\s+)?$", re.I)
_ASKS_BELOW = re.compile(
    r"\b(lower|trial|first[- ]instance)\s+(court|judge)\b|\bcourt\s+below\b|"
    r"\bappeal(ed|s)?\s+(from|against)\b|"
    r"\bwhich court\b.*\bfrom\b",
    re.I,
)
# a who-question asking for several (the parties, the inventors, the judges) is answered by every name that
# scores at least MANY_SHARE of the best, in its line or making up a line near it (`_every_name`)
_ASKS_MANY = re.compile(
    r"^\s*(who\s+(are|were)|(which|what)\s+(\w+\s+)?(parties|inventors|judges|justices|barristers|solicitors|"
    r"lawyers|attorneys|defendants|appellants|respondents|claimants|plaintiffs|petitioners|signatories|"
    r"arbitrators|witnesses|members|assignees))\b",
    re.I,
)
MANY_SHARE = 0.5
MANY_REACH = 3  # lines either side: a head lists its judges and parties a line each
MANY_LINE_SHARE = 0.6  # ... a name making up this share of such a line
# "Filed: Feb. 17, 2023", "(22) Filed:", "Assignee: …": a line whose label names what the question asks
# about
_LABEL = re.compile(r"^\s*(?:\(\d+\)\s*)?([A-Z][^:\n]{0,40}):(?:\s|$)")
_INLINE_LABEL = re.compile(r"(?:^|\)\s|;\s)\s*(?:\(\d+\)\s*)?([A-Z][\w .,]{0,30}):\s*$")
LABEL_WEIGHT = 1.5
# a US caption's counsel: "X, with whom Y and Z were on brief, for appellee" (X argued)
_WITH_WHOM = re.compile(r"\bwith whom\b", re.I)
# a court answers who decided, heard or sentenced, not who was harmed, paid or represented
_COURT = re.compile(r"\b(?:Court|Tribunal|COURT|TRIBUNAL)\b")
_ASKS_COURT = re.compile(
    r"\b(courts?|tribunals?|judges?|justices?|bench)\b|\bwho\s+(decided|ruled|heard|held|found|convicted|"
    r"sentenced|tried|ordered|granted|dismissed|refused|allowed|quashed|determined)\b",
    re.I,
)
_WHO_SHAPES = ("person", "name", "organisation")
# "Which judge gave permission?" is answered by a judge, not by a party named beside one
_ASKS_JUDGE = re.compile(
    r"\b(which|what)\s+(?!(did|does|do|was|is)\b)(\w+\s+){0,3}judge\b|\bwho\s+was\s+the\s+judge\b", re.I
)
_BENCH = r"J|LJ|JJ|LJJ|MR|HHJ|EJ|DJ|DDJ|UTJ|Judges?|Justices?|Master|Recorder|JUDGE|JUSTICE"
_JUDICIAL = re.compile(rf"\b({_BENCH}|QC|KC|Lord|Lady)\b")
# "Who was the arbitrator?", "Who is her husband?": someone other than a judge, and not the owner in "Ms
# Stanley's solicitors"
_ASKS_OTHER_ROLE = re.compile(
    r"^\s*who\s+(is|was|are|were)\s+(the|her|his|their|[\w.]+\s+\w+['’]s)\s+(\w+\s+){0,2}?"
    r"(arbitrator|mediator|officer|husband|wife|partner|mother|father|son|daughter|solicitor|barrister|"
    r"expert|witness|director|employee|doctor|surveyor|valuer|accountant|caseworker)s?\b",
    re.I,
)
_BENCH_NAME = re.compile(rf"\b({_BENCH})\b")
_OWNER = re.compile(r"[’']s$")
_BIRTH = re.compile(r"\bdate of birth\b", re.I)  # answered where one "was born on" a date
# "Where was the cargo shipped from?": of "from Rotterdam to Lagos", the place after the question's word
_ASKS_FROM_TO = re.compile(r"\b(from|to)\s*\?*\s*$", re.I)
_FROM_TO = re.compile(r"\b(from|to)\s+(?:the\s+)?$", re.I)
# kinds whose answer is a name: one that repeats a name the question gives is the question's, not its answer
_NAMED = frozenset({"person", "name", "organisation", "place"})


OTHER_SHAPE_WEIGHT = 0.6  # a title-less name, or another shape than asked


@dataclass(frozen=True)
class TypedSpan:
    kind: str  # what the question asks for: person, organisation, date, amount, duration, penalty, place, …
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
    return en_span_kind(question)


def candidates(text: str, kind: str, chinese: bool = False) -> list[tuple[int, int, str]]:
    """(start, end, shape) of the phrases of `text` that can answer a `kind` question, longest first where
    they overlap."""
    return zh_candidates(text, kind) if chinese else en_candidates(text, kind)


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
    return shape in _NAMED and bool((_words(span) - NOT_NAMES) & q_words)


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
    kind, q_terms = span_kind(question), _asked_terms(question)
    if kind is None or not q_terms:
        return None
    units = [(sid, text, a, b) for sid, text in passages for a, b in _units(text)]
    chinese = bool(HAN.search(question))
    found = [candidates(text[a:b], kind, chinese) for _, text, a, b in units]
    if not any(found):
        return None
    terms = [term_spans(text[a:b]) for _, text, a, b in units]
    relevance, idf, on_role = _relevance(question, q_terms, units, terms, similar)
    q_words = _words(question)
    lower_words = {w for _, text in passages for w in re.findall(r"\b[a-z][\w’'-]*", text)}
    # on a line of the role a who-question asks about ("By: /s/ X") that names nobody with a title, a name
    # needs none
    untitled = [
        r and kind == "person" and all(sh != "person" for *_, sh in f)
        for r, f in zip(on_role, found, strict=True)
    ]
    labels = _labels_before(units)
    counted = {t for w in counted_words(question) for t, _, _ in term_spans(w)} if kind == "amount" else set()
    # (score, unit, start and end in it, its relevance, shape)
    scored: list[tuple[float, int, int, int, float, str]] = []
    for i, ((_, text, a, b), phrases) in enumerate(zip(units, found, strict=True)):
        rel = relevance[i]
        if min(rel, 1.0) < min_relevance:  # the bar reads what the answer's confidence shows
            continue
        for ca, cb, shape in phrases:
            cb = _count_end(text[a:b], cb, counted) if shape == "count" else cb
            span = text[a + ca : a + cb]
            own = {t for t, _, _ in term_spans(span)} <= q_terms - _TYPE_TERMS
            if own or _repeats_the_question(span, shape, q_words):
                continue  # the question's own words
            if shape in ("name", "place") and not is_proper(span, lower_words):
                continue
            if counted and (shape == "amount" or not _counts(span, counted)):
                continue  # "$30,000" or "5%" for "How many restaurants must be developed?"
            score = rel * (1 + _closeness(a + ca, a + cb, terms[i], idf)) - 1e-6 * i
            score *= 1.0 if shape == kind or (shape == "name" and untitled[i]) else OTHER_SHAPE_WEIGHT
            line = labels[i] + text[a : a + ca]
            score *= _placement(question, q_terms, text[max(0, a + ca - 40) : a + ca], line, span, shape)
            scored.append((score, i, ca, cb, rel, shape))
    if not scored or (best := max(scored, key=lambda x: x[0]))[0] <= 0:  # the first of equals
        return None
    score, i, ca, cb, rel, _ = best
    sid, text, a, b = units[i]
    span = text[a + ca : a + cb]
    if kind in ("person", "organisation") and _ASKS_MANY.search(question):
        span = _every_name(best, scored, units)
    return TypedSpan(kind, span, sid, a + ca, a + cb, text[a:b].strip(), round(min(rel, 1.0), 4))


def _asked_terms(question: str) -> set[str]:
    """The question's terms, a date of birth asked where one "was born" (not the judgment's "Date:")."""
    terms = content_terms(question)
    return terms - {"date", "birth"} | {"born"} if _BIRTH.search(question) else terms


def _counts(span: str, counted: set[str]) -> bool:
    """A count of what a how-many question counts (`counted`, their stems): its last word is one of them
    ("1,000,000 shares"); a count of other things ("Section 2.20 hereof") is none."""
    return bool({t for t, _, _ in term_spans(span.split()[-1])} & counted)


def _count_end(line: str, end: int, counted: set[str]) -> int:
    """Where a count ends in its line: after the last of the next few words that names what the question
    counts ("three escorting officers", "10 specialist metabolic services centres"), else where it ends."""
    words = re.match(rf"(?:\s+[a-z]+){{0,{COUNT_REACH}}}", line[end:])[0]
    ends = [m.end() for m in re.finditer(r"[a-z]+", words) if _counts(m[0], counted)]
    return end + ends[-1] if ends else end


def _every_name(best, scored, units) -> str:
    """ "Who are the inventors?": the names of the best one's shape that score at least MANY_SHARE of it, in
    its line, or making up most of a line near it (a head that lists its judges or parties a line each), in
    the text's order."""
    score, i, *_, shape = best
    names = []
    for sc, j, x, y, _, sh in sorted(scored, key=lambda r: r[1:3]):
        _, text, a, b = units[j]
        whole = (y - x) >= MANY_LINE_SHARE * len(text[a:b].strip())
        if sh == shape and sc >= MANY_SHARE * score and (j == i or (abs(j - i) <= MANY_REACH and whole)):
            names.append(text[a + x : a + y])
    return joined(list(dict.fromkeys(names)))


def _placement(question: str, q_terms: set[str], before: str, line: str, span: str, shape: str) -> float:
    """LABEL_WEIGHT for the value of a label that names what the question asks about ("Assignee: iRobot"),
    times OTHER_SHAPE_WEIGHT for a phrase whose place says it answers another question (`q_terms`: the
    question's `content_terms`; `before`: the passage's text just before the phrase, `line`: its line's):
    the court an appeal came from, unless the question asks about the court below; a place after "to" when
    the question asks where from, or after "from" when it asks where to; a number labelled otherwise than
    the one asked for; counsel "with whom" others were on brief; a court for a who-question that asks
    nothing a court does ("Who was Brown convicted of killing?"); a name without a judge's title or suffix
    for "Which judge …?", and never a body's name nor a bare one for it (0: "Isle of Anglesey County
    Council", "Welsh Ministers")."""
    if shape != "person" and _ASKS_JUDGE.search(question) and not _JUDICIAL.search(span):
        return 0.0
    label = _INLINE_LABEL.search(line)
    named = label and {t for t, _, _ in term_spans(label[1])} & q_terms
    asked, lead, numbered = (
        _ASKS_FROM_TO.search(question),
        _FROM_TO.search(before),
        ASKS_NUMBER.search(question),
    )
    other = (
        _WITH_WHOM.search(line)
        or (
            "court" in span.lower()
            and bool(_APPEAL_FROM.search(before)) != bool(_ASKS_BELOW.search(question))
        )
        or (shape in _WHO_SHAPES and bool(_COURT.search(span)) and not _ASKS_COURT.search(question))
        or (shape in _WHO_SHAPES and _ASKS_JUDGE.search(question) and not _JUDICIAL.search(span))
        or (shape in _WHO_SHAPES and _ASKS_OTHER_ROLE.search(question) and _BENCH_NAME.search(span))
        or (shape in _WHO_SHAPES and _OWNER.search(span))
        or (shape == "place" and asked and lead and asked[1].lower() != lead[1].lower())
        # "What is the patent number?": not the line's "Case No:"
        or (shape == "number" and numbered and numbered[1][:4].lower() not in before.lower())
    )
    return (LABEL_WEIGHT if named else 1.0) * (OTHER_SHAPE_WEIGHT if other else 1.0)


def _relevance(
    question: str, q_terms: set[str], units, terms, similar
) -> tuple[list[float], dict[str, float], list[bool]]:
    """Each unit's relevance: the idf-weighted share of the question's terms it holds (idf over the units;
    a label's terms count again), averaged with its cosine with the question when `similar`
    (retrieval.evidence.SentenceVectors.similarity) gives one, plus ROLE_LINE_BONUS for a line of the role
    the question asks about, or what its neighbours lend it (`_lent`); the idf; and which units are lines of
    that role."""
    held = [{t for t, _, _ in ts} for ts in terms]
    idf = {t: math.log(1 + len(units) / (1 + sum(t in h for h in held))) for t in q_terms}
    total = sum(idf.values())
    sims = None if similar is None else similar([text[a:b] for _, text, a, b in units])
    roles = [line for asks, line in _ROLE_LINES if asks.search(question)]
    own, bonus = [], []
    for i, (_, text, a, b) in enumerate(units):
        r = sum(w for t, w in idf.items() if t in held[i]) / total
        if label := _LABEL.match(text[a:b]):
            r += sum(idf.get(t, 0.0) for t in {t for t, _, _ in term_spans(label[1])}) / total
        if sims is not None:
            r = (1 - SIMILARITY_WEIGHT) * r + SIMILARITY_WEIGHT * max(float(sims[i]), 0.0)
        own.append(r)
        bonus.append(ROLE_LINE_BONUS * any(line.search(text[a:b]) for line in roles))
    if HAN.search(question):  # an agent's line under the party the question names
        owned = owner_bonus(question, [(sid, text[a:b]) for sid, text, a, b in units])
        bonus = [x + ROLE_LINE_BONUS * o for x, o in zip(bonus, owned, strict=True)]
    return _lent(units, own, bonus), idf, [x > 0 for x in bonus]


def _lent(units, own: list[float], bonus: list[float]) -> list[float]:
    """Each unit's relevance, its own plus its role bonus, or where more what the unit before lends it: all of
    its own when that is a label alone ("(22) Filed:" / "Jan. 9, 1998", a PDF head's field), else
    CONTEXT_WEIGHT of it when in the same passage ("The judgment was handed down remotely. The date for
    hand-down is 30 June 2020.")."""
    labels = _labels_before(units)
    out = []
    for i, unit in enumerate(units):
        r = own[i] + bonus[i]
        if labels[i]:
            r = max(r, own[i - 1])
        elif i > 0 and units[i - 1][0] == unit[0]:
            r = max(r, CONTEXT_WEIGHT * own[i - 1])
        out.append(r)
    return out


def _labels_before(units) -> list[str]:
    """Each unit's label where it stands alone on the line before ("(22) Filed:" / "Jan. 9, 1998": a PDF
    head's field), else ""."""
    out = [""]
    for _, text, a, b in units[:-1]:
        line = text[a:b].strip() + " "
        out.append(line if _LABEL.fullmatch(line) else "")
    return out


def _closeness(start: int, end: int, terms, idf: dict[str, float]) -> float:
    """In [0, 1]: the question's terms near the phrase, each weighed by its idf and by 1 / (1 + gap /
    CLOSE_CHARS) at its nearest occurrence."""
    near: dict[str, float] = {}
    for t, s, e in terms:
        if t in idf:
            gap = max(s - end, start - e, 0)
            near[t] = max(near.get(t, 0.0), 1 / (1 + gap / CLOSE_CHARS))
    return sum(idf[t] * v for t, v in near.items()) / sum(idf.values())
