"""Questions asking the standard of review an American appellate court applied ("What standard of review
applies to the grant of summary judgment?", "How does the court review the decision on the motion to
dismiss?", "What is the standard of review?").

An opinion states its standard in a sentence of a form of its own: "We review de novo a district court's
grant of summary judgment.", "This Court reviews for clear error a hearing judge's findings of fact", "… is
reviewed de novo.", "our review is de novo", "will not be reversed absent an abuse of discretion". The same
words also define a standard ("A finding of fact is clearly erroneous when …"), apply it ("We can find no
clear error in that finding"), report a party's view ("plaintiffs argue … is reviewed deferentially") or
suppose one ("if our review were de novo"); none of those states the court's standard. Where an opinion
states several (findings of fact for clear error, conclusions of law de novo), the one stated of what the
question names answers. `review_answer(question, passages)` gives the standard as printed, with the
sentences stating it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from retrieval.hybrid import Passage, sentences_of
from retrieval.text import terms

_ASKED = re.compile(
    r"\bstandards? of review\b|\bstandard (?:applies|applied|governs|did)\b|\bunder what standard\b"
    r"|\bhow (?:does|did|do|will|should) (?:the|this|an?) (?:appellate )?(?:court|circuit|panel)\b"
    r"[^?]{0,30}\breview",
    re.IGNORECASE,
)
STANDARDS = re.compile(
    r"\bde novo\b|\babuse of discretion\b|\bclear error\b|\bclearly erroneous\b|\bsubstantial evidence\b"
    r"|\bplain error\b|\barbitrary[- ]and[- ]?capricious\b|\bindependently\b|\bplenary\b"
    r"|\bwithout deference\b",
    re.IGNORECASE,
)
# the court stating how it reviews: "we review", "is reviewed", "our review is", "will not be reversed absent"
_REVIEWS = re.compile(
    r"\breview(?:s|ed)?\b|\bstandard of review\b|\b(?:will not|only if)\b[^.;]{0,40}\b(?:overturn|reverse|"
    r"disturb)|\b(?:we|this court) (?:will )?(?:only )?(?:disturb|overturn|reverse)\b|\bappellate review\b",
    re.IGNORECASE,
)
# a party's view ("failure to state a claim" is no claim that …), a supposition, the court applying a standard
# rather than stating it, or the standard of a court below
_NOT_STATED = re.compile(
    r"\b(?:argues?|argued|contends?|contended|asserts?|asserted|maintains?|urges?|claims? that)\b"
    r"|\b(?:plaintiffs?|defendants?|appellants?|appellees?|petitioners?|respondents?)\b"
    r"[^.]{0,30}\bnote[sd]?\b"
    r"|\bif (?:our|we|the court's) review\b|\bwere (?:we|our)\b|\b(?:find|found|see) no\b"
    r"|\b(?:trial|district|circuit|lower|superior) court (?:is required to|must|shall|may) review\b",
    re.IGNORECASE,
)
_PARTS = re.compile(r",? (?:and|but|while|whereas) |; ")  # where a sentence goes on to another object
_HEADING = re.compile(r"^\s*(?:[IVX]+\.|[A-Z]\.|\d+\.)?\s*standards? of review\s*$", re.IGNORECASE)
# what a question says of the standard, not of what is reviewed
_ASKING_WORDS = (
    "what which how standard standards review reviewed reviews apply applies applied applying court courts "
    "circuit panel appellate use used govern governs governed did does do is are was"
)


@cache
def _asking() -> frozenset[str]:
    return frozenset(terms(_ASKING_WORDS))


def asks_review(question: str) -> bool:
    """Whether an English question asks the standard of review the court applied."""
    return _ASKED.search(question) is not None


def standards_stated(passages: Sequence[Passage]) -> list[tuple[str, str, bool]]:
    """(segment_id, sentence, under a "Standard of Review" heading) of each sentence in which the court
    states a standard of review, in the opinion's order."""
    out, heading = [], False
    for _, segment_id, sentence in sentences_of(passages):
        if _HEADING.match(sentence):
            heading = True
            continue
        stated = STANDARDS.search(sentence) and _REVIEWS.search(sentence)
        if stated and not _NOT_STATED.search(sentence):
            out.append((segment_id, sentence, heading))
    return out


def review_answer(
    question: str, passages: Sequence[Passage]
) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(the standard as printed, answer type "field", the sentences stating it, best first) for the
    question, or None when the opinion states none. The sentence sharing most words with what the question
    names comes first (one under a "Standard of Review" heading, then the earliest, on a tie)."""
    found = standards_stated(passages)
    if not found:
        return None
    asked = set(terms(question)) - _asking()
    ranked = sorted(
        range(len(found)),
        key=lambda i: (-len(asked & set(terms(found[i][1]))), not found[i][2], i),
    )
    best = found[ranked[0]][1]
    return "; ".join(_standards_of(best, asked)), "field", [found[i][:2] for i in ranked[:3]]


def _standards_of(sentence: str, asked: set[str]) -> list[str]:
    """The standards a sentence states, as printed; where it states several, each of its own object ("reviews
    for clear error a hearing judge's findings of fact, and reviews without deference … conclusions of law"),
    those of the part naming what the question asks about, when one part does."""
    named = list(dict.fromkeys(m.group(0) for m in STANDARDS.finditer(sentence)))
    parts = [p for p in _PARTS.split(sentence) if STANDARDS.search(p)]
    overlap = [len(asked & set(terms(_object_of(p)))) for p in parts]
    if len(named) < 2 or len(parts) < 2 or not max(overlap) or overlap.count(max(overlap)) > 1:
        return named
    return list(dict.fromkeys(m.group(0) for m in STANDARDS.finditer(parts[overlap.index(max(overlap))])))


def _object_of(part: str) -> str:
    """What a part of a sentence reviews: from its last review word before its standard ("In attorney
    discipline, this Court reviews for clear error a hearing judge's findings" → "reviews for clear error a
    hearing judge's findings"), so that words the parts share before it choose none of them."""
    standard = STANDARDS.search(part).start()
    verbs = [m.start() for m in _REVIEWS.finditer(part) if m.start() < standard]
    return part[verbs[-1] if verbs else standard :]
