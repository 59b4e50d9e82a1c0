"""English questions about what a judgment is about ("What is this appeal about?", "What issue does the
appeal raise?", "What is the central question in this case?"), answered from the judgment's opening, where
a judge says so: "The central issue in this appeal is whether …", "This appeal concerns …", "This is an
appeal against the decision of …", "The question presented is whether …".

A search cannot answer these: the question's words ("issue", "appeal") are in most sentences of an
appeal, and the sentence that answers it is told by its place and its form, not its words.
"""

from __future__ import annotations

import re

from retrieval.covers import COVER_BLOCKS
from retrieval.hybrid import Passage
from retrieval.text import sentences

_I = re.IGNORECASE
_ASKED = re.compile(
    r"\bwhat\s+(?:is|was|are|were)\s+(?:this|the)\s+"
    r"(?:appeal|case|application|claim|dispute|judgment)s?\s+about\b"
    r"|\bwhat\s+(?:issues?|questions?|points?)\s+(?:of\s+law\s+)?(?:does|did|do)\s+(?:this|the)\s+"
    r"(?:appeal|case|application)s?\s+(?:raise|present|concern|turn\s+on)\b"
    r"|\bwhat\s+(?:is|was|are|were)\s+the\s+(?:(?:central|main|principal|basic|key|only|real)\s+)?"
    r"(?:issues?|questions?)\s+(?:in|on|raised\s+(?:by|in)|before|presented\s+(?:by|in))\s+"
    r"(?:this|the)\s+(?:appeal|case|application|court)\b"
    r"|\bwhat\s+(?:does|did)\s+(?:this|the)\s+(?:appeal|case|application)\s+(?:concern|involve)\b",
    _I,
)
# a judge saying what the appeal is about, strongest first
_SAYS = (
    re.compile(
        r"\b(?:issues?|questions?)\s+(?:(?:raised\s+)?(?:in|on|by"
        r"|for\s+(?:decision|determination|this\s+court)|before\s+(?:us|the\s+court))\s+)"
        r"(?:(?:in|on|by)\s+)?(?:this|these|the)?\s*(?:appeals?|applications?|court|case)?\b"
        r"[^.]{0,40}?\b(?:is|are|was|were)\b"
        r"|\b(?:central|main|principal|basic|key|only|sole|essential|real)\s+(?:issue|question|challenge)\b"
        r"|\bquestions?\s+presented\b"
        r"|\b(?:we|the\s+court)\s+(?:must|are\s+asked\s+to)\s+(?:decide|determine)\s+whether\b",
        _I,
    ),
    re.compile(
        r"\b(?:this|the|the\s+present|these)\s+(?:\w+\s+)?(?:appeals?|applications?|case|claims?|proceedings"
        r"|ruling)\b(?:[^.;]{0,200}?\s)?(?:concerns?|raises?|(?:is|are)\s+(?:about|concerned\s+with)"
        r"|relates?\s+to|turns?\s+on|involves?|disposes\s+of|arises?\s+(?:from|out\s+of))\b",
        _I,
    ),
    re.compile(
        r"\bthis\s+is\s+(?:an?|the)\s+(?:\w+\s+){0,3}?(?:appeal|application)\b"
        r"|\b(?:(?:this|the|an)\s+appeals?(?:\s+(?:is|are))?"
        r"|(?:appellants?|applicants?|claimants?|he|she|they)\s+(?:appeals?|challenges?))\b"
        r"[^.]{0,60}?\b(?:against|from)\s+(?:the|a|an|parts?\s+of\s+the)\s+"
        r"(?:\w+\s+){0,2}?(?:order|decision|judgment|sentence|determination|refusal|dismissal|findings)\b"
        r"|\bseeks?\s+permission\s+to\s+appeal\b|\bby\s+an\s+appeal\s+notice\b|\bwe\s+heard\s+an\s+appeal\b",
        _I,
    ),
)
OPENING = 24  # the body's first passages: the judgment's introduction
_NEAR = 3  # passages after the first statement that may hold a stronger one


def asks_about(question: str) -> bool:
    return bool(_ASKED.search(question))


def subject(passages: list[Passage]) -> list[tuple[str, str]]:
    """(segment_id, sentence) of the sentences of the judgment's opening that say what it is about: first
    the strongest of those near the first such sentence (an issue stated, then the appeal's subject, then
    what it is an appeal against; a later statement of a ground's issue is not the appeal's), then the rest
    in the text's order; [] when the opening says none of these."""
    body = [p for p in passages if p.block_type not in COVER_BLOCKS][:OPENING]
    found: list[tuple[int, int, str, str]] = []  # (rank, passage, segment_id, sentence) in the text's order
    for order, p in enumerate(body):
        for a, b in sentences(p.text):
            sentence = p.text[a:b].strip()
            rank = next((i for i, pattern in enumerate(_SAYS) if pattern.search(sentence)), None)
            if rank is not None and len(sentence) > 30:
                found.append((rank, order, p.segment_id, sentence))
    if not found:
        return []
    best = min((f for f in found if f[1] <= found[0][1] + _NEAR), key=lambda f: f[:2])
    rest = [f for f in found if f is not best]
    return [(segment_id, sentence) for _, _, segment_id, sentence in [best, *rest]]
