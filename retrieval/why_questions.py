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

from retrieval.covers import COVER_BLOCKS
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
    r"|\b(?:I|we)\s+(?:(?:therefore|respectfully|also|have)\s+)?(?:consider|conclude[ds]?|accept|reject|agree"
    r"|disagree|find|found|decided|think|do\s+not\s+(?:accept|consider|think|find|agree))\b|\bit\s+follows\b"
    r"|\baccordingly\b"
    r"|\btherefore\b|\bfor\s+(?:these|those|the)\s+reasons\b|\bin\s+(?:short|summary|conclusion|sum)\b"
    r"|\bin\s+(?:these|the)\s+circumstances\b|\bit\s+is\s+(?:clear|plain)\b|\blooked\s+at\s+overall\b",
    _I,
)
# what it concludes: the decision below right or wrong, a point failing
_JUDGES = re.compile(
    r"\b(?:was|were|is|are)\s+(?:\w+\s+){0,2}(?:right|wrong|correct|entitled|justified|mistaken|in\s+error"
    r"|open\s+to)\b|\berr(?:ed|or)\b|\bcannot\s+(?:stand|be\s+faulted|be\s+sustained)\b"
    r"|\b(?:correctly|rightly|wrongly|properly)\s+(?:\w+\s+)?(?:interpreted|construed|decided|held|found"
    r"|concluded|applied|directed|rejected|accepted)\b"
    r"|\bno\s+(?:basis|error|reason|breach|delay|merit)\b|\bmisconceived\b|\bfails?\b|\bsucceeds?\b",
    _I,
)
# a reason given with the outcome: "… must be allowed on grounds of procedural irregularity"
_BECAUSE = re.compile(r"\bbecause\b|\bsince\b|\bon\s+(?:the\s+)?grounds?\s+(?:of|that)\b", _I)
# a sentence leaving a point undecided gives no reason ("It is therefore unnecessary to consider …")
_UNDECIDED = re.compile(
    r"\bunnecessary\s+to\b|\bnot\s+(?:strictly\s+)?necessary\s+to\b|\bneed\s+not\b"
    r"|\bdo(?:es)?\s+not\s+need\s+to\b",
    _I,
)
_BEFORE = 4  # passages before the disposition's that may hold its reasons


def asks_why(question: str) -> bool:
    return bool(_ASKED.search(question))


def reasons(passages: list[Passage]) -> list[tuple[str, str]]:
    """(segment_id, sentence) of the lead judgment's reasons for its disposition of the appeal, strongest
    first; [] when no disposition of an appeal is found."""
    body = [p for p in passages if p.block_type not in COVER_BLOCKS]
    cut = [(i, p.segment_id, p.text[a:b].strip()) for i, p in enumerate(body) for a, b in sentences(p.text)]
    lead = lead_disposition(body)
    if lead is None:
        return []
    at = cut.index(lead)
    # before it, and after it in its own passage ("I would allow both appeals. … I have concluded …")
    near = [n for n, f in enumerate(cut) if lead[0] - _BEFORE <= f[0] <= lead[0] and n != at]
    scored = [(_score(cut[n][2]), n) for n in near] + [(_disposition_score(lead[2]), at)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], abs(at - s[1])))
    return [cut[n][1:] for _, n in ranked]


def _score(sentence: str) -> int:
    """How surely a sentence gives a reason: what it concludes of the decision below, then a conclusion in
    the judge's own voice; a quotation, or a point left undecided, gives none."""
    if (
        sentence.lstrip("0123456789. ").startswith(("“", '"'))
        or _UNDECIDED.search(sentence)
        or len(sentence) < 40
    ):
        return 0
    return 2 * bool(_JUDGES.search(sentence)) + bool(_CONCLUDES.search(sentence))


def _disposition_score(sentence: str) -> int:
    """The disposition gives a reason before its outcome ("The UT were therefore correct … and I would
    dismiss the appeal") or with a "because" after it; its consequential orders ("… and hold that S&H is
    entitled to summary judgment") are none."""
    outcome = DISPOSES.search(sentence)
    return _score(sentence[: outcome.start()]) or 3 * bool(_BECAUSE.search(sentence[outcome.end() :]))
