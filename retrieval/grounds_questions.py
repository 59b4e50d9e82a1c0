"""English questions asking an appeal's grounds ("What are the grounds of appeal?", "On what grounds was the
appeal brought?"), answered from where the judgment states them: a sentence that counts or introduces them
("There are three grounds of appeal.", "Mr Horne advances the following three grounds of appeal:") with the
grounds that follow it (a list, or "Ground 1 alleges that …", "Secondly, it is said that …"), or, where a
ground is stated before any count, the sentences stating one each ("SIS's first ground of appeal is …").

A search cannot answer these: "ground" and "appeal" are in every paragraph that deals with a ground, and
the statement is told by its form. Grounds of an appeal below ("appealed to the Upper Tribunal on five
grounds") are not this appeal's.
"""

from __future__ import annotations

import re

from retrieval.hybrid import Passage, sentences_of

_I = re.IGNORECASE
_ASKED = re.compile(
    r"\bgrounds?\s+(?:of|for)\s+(?:the\s+|this\s+|their\s+|his\s+|her\s+|its\s+)?appeal\b"
    r"|\b(?:on\s+)?what\s+grounds?\b[^?]*\b(?:appeal\w*|advanced|raised|relied|argued)\b"
    r"|\bwhy\s+did\s+the\s+(?:appellants?|claimants?|defendants?|applicants?)\s+appeal\b",
    _I,
)
_NUMBER = (
    r"(?:(?:all|both|each\s+of\s+the)\s+)?(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty"
    r"|several|various|a\s+number\s+of|(?:a\s+)?(?:single|sole))"
)
# a sentence counting or introducing this appeal's grounds
_INTRO = re.compile(
    r"\bthere\s+(?:are|were|is|was)\s+(?:\w+\s+){0,2}grounds?\s+of\s+appeal\b"
    r"|\bgrounds?\s+of\s+appeal\s+(?:(?:as\s+pleaded|before\s+us|against\s+[^,.:;]{0,80}?)\s+)?"
    r"(?:are|were|is|was|read|reads|state[sd]?|raise|assert|allege|made\s+the\s+following)\b"
    r"(?=\s*(?::|$|that\b|as\s+follows|in\s+(?:these|the\s+following)\s+terms|these\b|,"
    r"|(?:\w+\s+){0,4}(?:issues?|points?|follows|below|grounds?)\b))"
    r"|\bgrounds?\s+of\s+appeal\b[^.]*(?:as\s+follows|:)\s*$"
    r"|\b(?:advance[sd]?|rel(?:y|ies|ied)\s+(?:up)?on|puts?(?:\s+forward)?|raise[sd]?|sets?\s+out|pursue[sd]?"
    rf"|condensed|distil(?:s|led)?|cit(?:es|ed|ing)|brings?)\s+(?:the\s+)?(?:(?:following|{_NUMBER})\s+"
    r"(?:\w+\s+)?grounds?|grounds\s+of\s+appeal)\b"
    rf"|\b{_NUMBER}\s+grounds?\s+(?:of\s+appeal\s+)?(?:are|were)\s+(?:advanced|pleaded|raised|relied)"
    rf"|\bappeal\w*\b[^.]{{0,120}}?\bon\s+(?:the\s+following\s+|{_NUMBER}\s+(?:\w+\s+)?)?"
    r"grounds?\b(?!\s+that)"
    r"|\bpermission\s+to\s+appeal\b[^.]{0,80}?\b(?:on|in\s+(?:relation|respect)\s+(?:to|of)|limited\s+to)\s+"
    rf"(?:(?:\w+\s+){{0,3}}of\s+the\s+)?(?:{_NUMBER}\s+(?:\w+\s+)?grounds?|grounds?\s+\d)",
    _I,
)
# the appeal below's grounds, a history's, or a ground disposed of
_ELSEWHERE = re.compile(
    r"\bappeal(?:ed|s)?\s+to\s+the\s+(?!court\s+of\s+appeal)(?:\w+[\s-]+){0,2}?"
    r"(?:tribunal|court|eat|ut|ftt|judge)\b|\bbefore\s+the\s+(?:eat|ut|ftt|upper|first|employment|county)"
    r"|\b(?:refused|rejected|dismissed|allowed|reject|dismiss|allow|uphold)\b"
    r"|\bnot\s+(?:to\s+)?(?:\w+\s+)?(?:sought|pursued?|granted|argued|advanced|raised)\b",
    _I,
)
_ORDINAL = (
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|final|last|sole|only|single|other|next|principal"
    r"|main|primary|secondary|additional|further|alternative|essential|central"
)
# what a sentence stating a ground says of it
_STATES = (
    r"(?:(?:is|was)\s+(?:that|whether|about|concerned\s+with|directed|formulated|in\s+these\s+terms)|alleges?"
    r"|contend(?:s|ed)?|asserts?|argues?|relates?|concerns?|challenges?|complains?|states?|says?|raises?)\b"
)
# a sentence stating one ground
_GROUND = re.compile(
    r"^\W{0,2}(?:\(?[a-z0-9]{1,4}[.)]\s*)?ground\s+\d+\w*(?:\s*\(\w+\))?\s*[:.–-]"
    rf"|\b(?:{_ORDINAL})\s+ground(?:\s+of\s+appeal)?\s*(?:,[^,]{{0,60}},\s*)?{_STATES}"
    rf"|\b(?:{_ORDINAL})\s+ground(?:\s+of\s+appeal)?\b[^.;:]{{0,140}}?\b(?:is|was)\s+that\b"
    rf"|\bground\s+\d+\w*(?:\s*\(\w+\))?\s+{_STATES}",
    _I,
)
# what starts each of an enumeration's items inside a paragraph, or an item of its own
_SEQUENCE = re.compile(
    r"^\W{0,2}(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth(?:ly)?|lastly"
    r"|finally)\b,?",
    _I,
)
_ITEM = re.compile(
    r"^\s*(?:\(\s*(?:\d{1,2}|[a-z]|[ivx]{1,5})\s*\)|(?:[a-z]|[ivx]{1,5})[.)]|\d{1,2}\)"
    r"|\d{1,2}\.\d{1,2}\.?)\s",
    _I,
)
_RUNS_ON = re.compile(r"^\s*(?:[a-z]|[“\"‘'\[])")
_NUMBERED = re.compile(r"^\s*(\d{1,2})\.\s")
_MOST = 10  # grounds shown


def asks_grounds(question: str) -> bool:
    return bool(_ASKED.search(question))


def grounds(passages: list[Passage]) -> list[tuple[str, str]]:
    """(segment_id, sentence) of the judgment's statement of its grounds of appeal: where its first such
    statement counts or introduces them, that sentence and the grounds after it; where it states a ground,
    every sentence stating one (those naming the appeal first); [] when the judgment states none."""
    found = sentences_of(passages)
    said = [f for f in found if _states_grounds(f[2])]
    if not said:
        return []
    if _GROUND.search(said[0][2]):
        stated = sorted((f for f in said if _GROUND.search(f[2])), key=lambda f: "appeal" not in f[2].lower())
        return [f[1:] for f in stated][:_MOST]
    listed = _following(found, found.index(said[0]))
    if not listed and len(said) > 1 and not _GROUND.search(said[1][2]):
        # a count with no grounds after it ("… permission to appeal … on one ground only") gives way to the
        # next introduction that has them or announces them ("… on Ground 1(f) only, that the UT erred in:")
        later = _following(found, found.index(said[1]))
        if later or said[1][2].endswith(":"):
            return [said[1][1:], *later, said[0][1:]][:_MOST]
    return [said[0][1:], *listed][:_MOST]


def _states_grounds(sentence: str) -> bool:
    """Whether a sentence introduces or states this appeal's grounds: not another's, not a document
    quoted ("“20. Ground 4 contends …"), not a heading or a contents line ("GROUND 2: ANXIOUS SCRUTINY")."""
    said = _INTRO.search(sentence) or _GROUND.search(sentence)
    if not said or _ELSEWHERE.search(sentence[: said.end() + 80]):  # a run-on sentence's later clauses aside
        return False
    letters = [c for c in sentence if c.isalpha()]
    return not sentence.startswith(("“", '"')) and sum(c.isupper() for c in letters) < 0.6 * len(letters)


def _following(found: list[tuple[int, str, str]], at: int) -> list[tuple[str, str]]:
    """The grounds after an introducing sentence: the rest of its passage's sentences that state a ground
    or go on an enumeration, then each following passage that is a list item (its first sentence) or
    opens with a ground, until one is neither."""
    out, passage, expect = [], found[at][0], 1
    # items numbered like paragraphs ("1. Bruising: …") only after a sentence announcing a list
    announced = found[at][2].endswith(":") or "follow" in found[at][2].lower()
    for i, segment_id, sentence in found[at + 1 :]:
        head = sentence.lstrip(" “\"‘'")  # a quoted list's items open with the quote
        if i == passage:
            if _GROUND.search(sentence) or _SEQUENCE.match(sentence):
                out.append((segment_id, sentence))
            continue
        if i != passage + 1:
            continue  # a list item's later sentences
        passage = i
        numbered = _NUMBERED.match(head)
        if announced and numbered and int(numbered.group(1)) == expect:
            expect += 1
        elif not (_ITEM.match(head) or _GROUND.search(head)):
            if _RUNS_ON.match(sentence):
                continue  # an item's line broken off, or a ground's words quoted
            break
        out.append((segment_id, sentence))
    return out
