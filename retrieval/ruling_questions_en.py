"""English questions whether a court affirmed, reversed, allowed, dismissed, granted or remanded ("Did the
Ninth Circuit reverse the grant of summary judgment?", "Was the appeal allowed?"), answered from the
disposition; and the sentence by which an appeal judgment disposes of the appeal in the judge's own words
(`lead_disposition`), where the role head did not put it in a VERDICT block.

A disposition states an outcome on one of two axes: the judgment below (reversed, vacated, set aside, an
appeal allowed: the appellant wins; affirmed, upheld, an appeal dismissed: it loses) or a request (granted;
denied, refused, rejected). The question's verb says the axis and the outcome it asks about; only
statements on that axis answer it (a judgment "AFFIRMED" does not say whether the court below granted a
motion), and only statements of an outcome: a verb after "is", "be", "we", "I would", or a bare "AFFIRMED."
opening a sentence (a noun such as "the district court's grant of summary judgment" states none). The
statements are the sentences of the VERDICT passages and those after "ORDERED" in any passage.
"""

from __future__ import annotations

import re

from retrieval.covers import COVER_BLOCKS
from retrieval.hybrid import Passage
from retrieval.text import sentences

_STEM = (
    r"(affirm|uph[eo]ld|sustain|revers|vacat|overturn|set\s+aside|quash|allow|grant|accept|dismiss|den[yi]"
    r"|refus|reject|remand|remit)"
)
# stem -> (axis, outcome): +1 the appellant or the one asking wins, -1 it loses
_OUTCOME = {
    "affirm": ("judgment", -1),
    "uphold": ("judgment", -1),
    "upheld": ("judgment", -1),
    "sustain": ("judgment", -1),
    "revers": ("judgment", 1),
    "vacat": ("judgment", 1),
    "overturn": ("judgment", 1),
    "set aside": ("judgment", 1),
    "quash": ("judgment", 1),
    "grant": ("request", 1),
    "accept": ("request", 1),
    "deni": ("request", -1),
    "deny": ("request", -1),
    "refus": ("request", -1),
    "reject": ("request", -1),
    "remand": ("remand", 1),
    "remit": ("remand", 1),
}
# a yes-no question, after the case it names if it names it first: "In Mortimer v. Baca, did the court …"
_ASKS = re.compile(
    r"^\s*(?:in\s+[^,?]{2,80},\s*)?(did|does|do|has|have|had|will|would|was|were|is|are)\b", re.I
)
_STATED = (
    re.compile(
        rf"\b(?:is|are|be|been|was|were)\s+(?:not\s+)?(?:hereby\s+|therefore\s+|accordingly\s+)?{_STEM}", re.I
    ),
    re.compile(
        r"\b(?:we|I|the court|this court)\s+"  # "I would therefore dismiss", "I too would allow"
        r"(?:(?:would|will|must|therefore|hereby|accordingly|too|also|so|now|propose\s+to)\s+){0,3}"
        rf"(?:(?:is\s+)?unable\s+to\s+|cannot\s+|(?:do|does|will|would)\s+not\s+|decline\s+to\s+)?{_STEM}",
        re.I,
    ),
    re.compile(rf"^\W*(?:\d+\.\s*)?{_STEM}(?:ed|d)\b", re.I),
    re.compile(rf"\band\s+{_STEM}(?:ed|d)\s+in\s+part\b", re.I),  # "affirmed in part and reversed in part"
)
# this court disposing of the appeal
DISPOSES = re.compile(
    r"\b(?:I|we)\s+(?:(?:would|will|shall|must|therefore|accordingly|also|too|so|now|propose\s+to)\s+){0,3}"
    r"(?:allow|dismiss)\b[^.;]{0,40}?\bappeals?\b"
    r"|\bappeals?\b[^.;]{0,40}?\b(?:is|are|be|must\s+be|should\s+be|will\s+be)\s+"
    r"(?:therefore\s+|accordingly\s+)?(?:allowed|dismissed)\b"
    r"|\b(?:the|this)\s+appeals?\s+(?:therefore\s+|accordingly\s+)?(?:fails?|succeeds?)\b",
    re.I,
)
_NOT_DISPOSED = re.compile(
    r"\bnot\s+(?:\w+\s+){0,2}(?:allow|dismiss)|\bunless\b|\bif\s+(?:the|this)\s+appeal\b", re.I
)
_LATE = 0.5  # the lead judgment's disposition comes in the later part of its body
# an appeal's fate in other words: "Did the appeal succeed?", "Was the appellant successful?", "Did Primus
# succeed in its appeal?": the first such word, the main verb of "did …" (not "lost" in "the lost goodwill
# exclusion" later on)
_FATE = re.compile(
    r"\b(succeed\w*|successful|unsuccessful|win|won|prevail\w*|fail(?:s|ed)?|lose|lost)\b", re.I
)
_APPEAL = re.compile(r"\b(?:appeals?|appellants?)\b", re.I)
_GROUND = re.compile(r"\bground")  # how one ground fared is not the appeal's fate
_NEGATED = re.compile(r"\b(?:not|unable to|cannot|decline to|no reason to)\s+(?:\w+\s+){0,2}$", re.I)
_ORDERED = re.compile(r"\bORDERED\b")


def _axis(stem: str, text: str) -> tuple[str, int]:
    """(axis, outcome) of a verb; "dismiss" and "allow" say the judgment below's fate when an appeal is
    dismissed or allowed, a request's otherwise (a complaint dismissed: a request denied)."""
    stem = re.sub(r"\s+", " ", stem.lower())
    if stem in ("dismiss", "allow"):
        sign = -1 if stem == "dismiss" else 1
        return ("judgment", sign) if re.search(r"\bappeal", text, re.I) else ("request", sign)
    return _OUTCOME[next(k for k in _OUTCOME if stem.startswith(k))]


def asked_outcome(question: str) -> tuple[str, int] | None:
    """(axis, outcome) a yes-no question asks about: the first verb of outcome after "did …", the last in a
    passive question ("Was the grant of summary judgment affirmed?"), an appeal said to succeed or fail
    (win, lose) on the judgment's axis; None for any other question."""
    opening = _ASKS.match(question)
    # after the case it names: "In Grant v. Smith, was the appeal dismissed?"
    verbs = list(re.finditer(rf"\b{_STEM}\w*", question[opening.start(1) :], re.I)) if opening else []
    if not verbs:
        fate = _FATE.search(question) if opening and _APPEAL.search(question) else None
        if fate is None or _GROUND.search(question):
            return None
        return "judgment", -1 if fate[1].lower().startswith(("un", "fail", "lo")) else 1
    verb = verbs[-1] if opening[1].lower() in ("was", "were", "is", "are") else verbs[0]
    return _axis(verb[1], question[opening.start(1) :])


def _statements(passages: list[Passage]) -> list[tuple[str, str]]:
    out = []
    for p in passages:
        ordered = _ORDERED.search(p.text)
        if p.block_type != "VERDICT" and ordered is None:
            continue
        start = 0 if p.block_type == "VERDICT" else ordered.end()
        out += [(p.segment_id, p.text[a:b].strip()) for a, b in sentences(p.text) if b > start]
    return out


def outcomes(passages: list[Passage], axis: str) -> list[tuple[int, str, str]]:
    """(outcome, segment_id, sentence) of every statement of an outcome on `axis` in the disposition."""
    out = []
    for segment_id, sentence in _statements(passages):
        for pattern in _STATED:
            for m in pattern.finditer(sentence):
                stated_axis, sign = _axis(m[1], sentence)
                if stated_axis == axis:
                    negated = _NEGATED.search(sentence[: m.start(1)])
                    out.append((-sign if negated else sign, segment_id, sentence))
    return out


def lead_disposition(body: list[Passage]) -> tuple[int, str, str] | None:
    """(passage index, segment_id, sentence) of the sentence by which an English appeal judgment disposes of
    the appeal in the judge's own words ("For these reasons, I would dismiss this appeal."): the first in
    the later half of its body (before the other judges agree; a case cited early on is no disposition of
    this one), none that says what the court would not do."""
    for i, p in enumerate(body):
        if i < _LATE * len(body):
            continue
        for a, b in sentences(p.text):
            sentence = p.text[a:b].strip()
            if DISPOSES.search(sentence) and not _NOT_DISPOSED.search(sentence):
                return i, p.segment_id, sentence
    return None


def english_ruling(question: str, passages: list[Passage]) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(answer, answer_type, [(segment_id, sentence)]) of an English question whether the court ruled one way,
    from the document's disposition: YES, NO, or "In part" when it states both outcomes; None when the
    question is no such question or the disposition states no outcome on its axis."""
    asked = asked_outcome(question)
    if asked is None:
        return None
    axis, sign = asked
    found = outcomes(passages, axis)
    if not found:  # an appeal judgment whose disposition the role head put among the opinion's blocks
        lead = lead_disposition([p for p in passages if p.block_type not in COVER_BLOCKS])
        found = outcomes([Passage(lead[1], "", lead[2], "VERDICT")], axis) if lead else []
    if axis == "remand" and not found:
        found = [
            (-1, s, t) for o, s, t in outcomes(passages, "judgment") if o < 0
        ]  # affirmed: nothing sent back
    if not found:
        return None
    units = list(dict.fromkeys((s, t) for _, s, t in found))
    signs = {o for o, _, _ in found}
    if len(signs) > 1:
        return "In part", "span", units
    yes = signs == {sign}
    return ("YES", "yes", units) if yes else ("NO", "no", units)
