"""English questions asking why an appeal was allowed or dismissed ("Why was the appeal dismissed?", "Why did
the appeal fail?", "What were the court's reasons for allowing the appeal?"), answered from where the lead
judgment concludes: the sentences just before its disposition ("For these reasons, I would dismiss this
appeal.") in which the judge says what decides the appeal ("In my judgment, the judge was entitled to find
…", "It follows that …"), or a disposition that gives its own reason ("… the appeal must be allowed on
grounds of procedural irregularity").

A search cannot answer these: "allow", "dismiss" and "appeal" are in every part of an appeal, and the
reasons are told by their place (the close of the lead judgment's discussion) and their form (a conclusion
in the judge's own voice).
"""

from __future__ import annotations

import re

from retrieval.hybrid import Passage
from retrieval.ruling_questions_en import DISPOSES, lead_disposition
from retrieval.text import sentences

_I = re.IGNORECASE
_OUTCOME = (
    r"(?:allowed|dismissed|refused|rejected|granted|upheld|succeed(?:ed)?|fail(?:ed)?"
    r"|successful|unsuccessful)"
)
_ASKED = re.compile(
    r"^\s*why\s+(?:was|were|did|has|had|is)\s+(?:the|this|these|both|(?:\w+['’]s))\s+(?:[\w'’]+\s+){0,2}?"
    rf"(?:appeals?|applications?|challenges?)\s+(?:(?:been|be|\w+ly)\s+)?{_OUTCOME}\b"
    r"|^\s*why\s+did\s+(?:the|this)\s+(?:court|judges?|court\s+of\s+appeal|panel)\s+(?:\w+\s+)?"
    r"(?:allow|dismiss|reject|refuse|uphold)\b[^?]*\bappeal"
    r"|\b(?:reasons?|basis)\s+(?:for|of)\s+(?:the\s+court['’]s\s+)?(?:allowing|dismissing|rejecting"
    r"|refusing|upholding|the\s+(?:decision|dismissal|outcome|result)\s+(?:of|on)\s+the\s+appeal)\b"
    r"|\bon\s+what\s+basis\s+(?:was|did)\b[^?]*\b(?:allow|dismiss)",
    _I,
)
# a judge's conclusion in its own voice
_CONCLUDES = re.compile(
    r"\bin\s+(?:my|our)\s+(?:judgment|view|opinion)\b|\b(?:I|we)\s+(?:am|are)\s+satisfied\b"
    r"|\b(?:I|we)\s+(?:(?:therefore|respectfully|also)\s+)?(?:consider|conclude|accept|reject|agree|disagree"
    r"|find|think|do\s+not\s+(?:accept|consider|think|find|agree))\b|\bit\s+follows\b|\baccordingly\b"
    r"|\btherefore\b|\bfor\s+(?:these|those|the)\s+reasons\b|\bin\s+(?:short|summary|conclusion|sum)\b"
    r"|\bin\s+(?:these|the)\s+circumstances\b|\bit\s+is\s+(?:clear|plain)\b|\blooked\s+at\s+overall\b",
    _I,
)
# what it concludes: the decision below right or wrong, a point failing
_JUDGES = re.compile(
    r"\b(?:was|were|is|are)\s+(?:\w+\s+){0,2}(?:right|wrong|correct|entitled|justified|mistaken|in\s+error"
    r"|open\s+to)\b|\berr(?:ed|or)\b|\bcannot\s+(?:stand|be\s+faulted|be\s+sustained)\b"
    r"|\bno\s+(?:basis|error|reason|breach|delay|merit)\b|\bmisconceived\b|\bfails?\b|\bsucceeds?\b"
    r"|\bbecause\b|\bon\s+(?:the\s+)?grounds?\s+of\b",
    _I,
)
_BEFORE = 4  # passages before the disposition's that may hold its reasons
_COVER = frozenset({"HEADER", "PARTIES"})


def asks_why(question: str) -> bool:
    return bool(_ASKED.search(question))


def reasons(passages: list[Passage]) -> list[tuple[str, str]]:
    """(segment_id, sentence) of the lead judgment's reasons for its disposition of the appeal, strongest
    first; [] when no disposition of an appeal is found."""
    body = [p for p in passages if p.block_type not in _COVER]
    cut = [(i, p.segment_id, p.text[a:b].strip()) for i, p in enumerate(body) for a, b in sentences(p.text)]
    lead = lead_disposition(body)
    if lead is None:
        return []
    at = cut.index(lead)
    scored = [(_score(f[2], n == at), n, f) for n, f in enumerate(cut[: at + 1]) if f[0] >= lead[0] - _BEFORE]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], at - s[1]))
    return [(segment_id, sentence) for _, _, (_, segment_id, sentence) in ranked]


def _score(sentence: str, disposes: bool) -> int:
    """How surely a sentence gives a reason: a conclusion in the judge's voice, what it concludes of the
    decision below; a disposition saying no more than its outcome gives none."""
    score = 2 * bool(_CONCLUDES.search(sentence)) + bool(_JUDGES.search(sentence))
    if disposes and not _JUDGES.search(DISPOSES.sub(" ", sentence)):
        return 0
    return score if len(sentence) > 40 else 0
