"""Questions about what a patent is about, its field and the problem it addresses ("What is the patent
about?", "What is the field of the invention?", "What problem does the invention solve?"), answered from
where a patent says so.

A search finds the sentences that share the question's words, "invention", "problem", "need", which every
patent repeats ("the invention is not limited to …", "connected as needed"); the answers stand in set
places: the abstract says what the patent is about, the opening of the description what the invention
relates to (what one printed without an abstract is about), and the summary or the background the
invention's object, the need it meets or the problem of what came before. `patent_part(question)` reads
which of the three a question asks; `patent_answer(question, passages)` answers with the first sentence
that says it and shows the sentences beside it.
"""

from __future__ import annotations

import re

from pipeline.records import DocKind
from retrieval.hybrid import Passage, sentences_of

_I = re.IGNORECASE
_IT = r"(?:the|this)\s+(?:present\s+)?(?:patent|invention)"
_ASKS = (
    (
        "problem",
        re.compile(
            r"\bwhat\s+(?:problems?|needs?|issues?|drawbacks?|disadvantages?)\s+(?:does|did|do|is)\s+"
            rf"{_IT}\s+"
            r"(?:solve|address|overcome|meet|remedy|try\s+to\s+solve|trying\s+to\s+solve)"
            rf"|\b(?:objects?|objectives?|aims?|purposes?|goals?)\s+of\s+{_IT}\b",
            _I,
        ),
    ),
    (
        "field",
        re.compile(
            rf"\b(?:technical\s+)?field\s+of\s+{_IT}\b"
            rf"|\bwhat\s+(?:technical\s+)?field\s+(?:does|is)\s+{_IT}\b"
            rf"|\bwhat\s+(?:does|do)\s+{_IT}\s+relate\s+to\b",
            _I,
        ),
    ),
    (
        "about",
        re.compile(
            rf"\bwhat\s+(?:is|was)\s+{_IT}\s+about\b|\bwhat\s+does\s+{_IT}\s+(?:describe|disclose|cover)\b"
            rf"|\bsummari[sz]e\s+{_IT}\b|^\s*what\s+is\s+{_IT}\s*\??\s*$",
            _I,
        ),
    ),
)
# "The present invention relates generally to …", "Embodiments of the invention relate to …", "The present
# invention is directed to …"
_RELATES = re.compile(
    r"\b(?:invention|disclosure|embodiments?\s+of\s+the\s+invention)\b[^.;]{0,40}?\b"
    r"(?:relates?|pertains?|(?:is|are)\s+(?:directed|concerned)|concerns?)\b",
    _I,
)
# the invention's object, the need it meets, the problem of what came before: strongest first
_PROBLEM = (
    re.compile(
        r"\b(?:object|objective|aim|purpose)\s+of\s+(?:(?:at\s+least\s+)?one\s+embodiment\s+of\s+)?"
        r"(?:the|this)\s+(?:present\s+)?invention\b|\bfurther\s+(?:object|aim)\s+(?:of|is)\b",
        _I,
    ),
    re.compile(
        r"\bneeds?\s+(?:has|have)\s+arisen\b|\b(?:a|an)\s+(?:[\w-]+\s+){0,2}need\s+(?:exists|remains)\b"
        r"|\bthere\s+(?:is|exists|remains)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}need\b"
        r"|\bwhat\s+(?:was|is)\s+needed\b"
        r"|\bit\s+would\s+(?:therefore\s+)?be\s+(?:desirable|advantageous)\s+to\b",
        _I,
    ),
    re.compile(
        r"\b(?:a|the|this|these)\s+problems?\s+(?:is|are|was|were|arises?|raised|with|of)\b|\bdrawbacks?\b"
        r"|\bdisadvantages?\b|\bshortcomings?\b|\bit\s+is\s+(?:still\s+)?difficult\s+to\b",
        _I,
    ),
)
_NOT_PROSE = frozenset({"CLAIM", "ABSTRACT", "HEADER"})
_BEFORE_DESCRIPTION = frozenset({"FIELD", "BACKGROUND", "SUMMARY", "OTHER"})


def patent_part(question: str) -> str | None:
    """Which a question asks: what the patent is "about", its "field", or the "problem" it addresses."""
    return next((part for part, rx in _ASKS if rx.search(question)), None)


def patent_answer(question: str, passages: list[Passage]) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(the first sentence that answers, "sentence", up to three sentences shown) of a question about a
    patent's subject, field or problem, from its passages; None when it asks none of these, the document is
    no patent or says nothing of it."""
    part = patent_part(question)
    if part is None or not passages or passages[0].kind != DocKind.PATENT:
        return None
    units = [(segment, sentence, passages[i].block_type) for i, segment, sentence in sentences_of(passages)]
    if part == "about":  # a grant printed without its abstract (an EP B1) is about what it relates to
        found = [(s, t) for s, t, kind in units if kind == "ABSTRACT"] or _relates(units)
    elif part == "field":
        found = _relates(units)
    else:
        found = next((f for rx in _PROBLEM if (f := _stating(units, rx))), [])
    return (found[0][1], "sentence", found[:3]) if found else None


def _relates(units: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The first sentence saying what the invention relates to, with those saying so right after it ("More
    particularly, the invention relates to …")."""
    prose = [(s, t) for s, t, kind in units if kind not in _NOT_PROSE]
    first = next((i for i, (_, t) in enumerate(prose) if _RELATES.search(t)), None)
    if first is None:
        return []
    found = [prose[first]]
    for unit in prose[first + 1 : first + 3]:
        if not _RELATES.search(unit[1]):
            break
        found.append(unit)
    return found


def _stating(units: list[tuple[str, str, str]], rx: re.Pattern[str]) -> list[tuple[str, str]]:
    """The sentences `rx` finds: an object anywhere in the patent's prose, a need or a problem only before
    its detailed description (where "as needed" and "the problem" are the embodiments')."""
    anywhere = rx is _PROBLEM[0]
    return [
        (s, t)
        for s, t, kind in units
        if kind not in _NOT_PROSE and (anywhere or kind in _BEFORE_DESCRIPTION) and rx.search(t)
    ]
