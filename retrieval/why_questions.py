"""English questions asking why an appeal was allowed or dismissed ("Why was the appeal dismissed?", "Why did
the appeal fail?", "What were the court's reasons for allowing the appeal?"), or a judgment below affirmed or
reversed ("Why did the Ninth Circuit affirm?", "Why was the conviction affirmed?"), answered from where the
court concludes: the sentences just before its disposition ("For these reasons, I would dismiss this
appeal.", "We affirm.") in which it says what decides the appeal ("In my judgment, the judge was entitled to
find …", "We hold that the commission did not err"), or a disposition that gives its own reason ("… the appeal
must be allowed on grounds of procedural irregularity", "Because it was reasonable to believe …, we affirm.").

An England and Wales judgment disposes of the appeal once, late in the lead judgment; an American opinion
says its outcome where it opens and again where it concludes, so the reasons before both count (a separate
opinion's "I would reverse" is no disposition of the court's).

A search cannot answer these: "allow", "dismiss" and "appeal" are in every part of an appeal, and the
reasons are told by their place (the close of the lead judgment's discussion) and their form (a conclusion
in the judge's own voice).
"""

from __future__ import annotations

import re

from retrieval.covers import COVER_BLOCKS
from retrieval.hybrid import Passage, sentences_of
from retrieval.ruling_questions_en import DISPOSES, lead_disposition

_I = re.IGNORECASE
_US_VERB = r"(?:affirm|reverse|vacate|uphold|overturn|set\s+aside)"
# a court below, whose reasons are not the appeal's ("Why did the district court grant …")
_BELOW = (
    r"(?:trial|district|lower|juvenile|bankruptcy|motion|family|county|magistrate|jury|judge|commission"
    r"|board)\b"
)
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
    r"|refusing|upholding|affirming|reversing|vacating"
    r"|the\s+(?:decision|dismissal|outcome|result)\s+(?:of|on)\s+the\s+appeal"
    r"|the\s+(?:affirmance|reversal))\b"
    r"|\bon\s+what\s+basis\s+(?:was|did)\b[^?]*\b(?:allow|dismiss|affirm|revers|vacat)"
    # a judgment below affirmed or reversed, asked of the court that did it (not of the court below)
    rf"|^\s*why\s+did\s+(?:the|this)\s+(?!(?:\w+\s+){{0,2}}?{_BELOW})(?:[\w.'’]+\s+){{1,4}}?{_US_VERB}\b"
    rf"|^\s*why\s+(?:was|were|has|had|is)\s+(?:the|this|these)\s+(?:[\w.'’-]+\s+){{1,5}}?"
    r"(?:been\s+)?(?:affirmed|reversed|vacated|upheld|overturned|set\s+aside)\b",
    _I,
)
# a judge's conclusion in its own voice
_CONCLUDES = re.compile(
    r"\bin\s+(?:my|our)\s+(?:judgment|view|opinion)\b|\b(?:I|we)\s+(?:am|are)\s+satisfied\b"
    r"|\b(?:I|we)\s+(?:(?:therefore|respectfully|also|have)\s+)?(?:consider|conclude[ds]?|accept|reject|agree"
    r"|disagree|find|found|decided|think|hold|do\s+not\s+(?:accept|consider|think|find|agree))\b"
    r"|\bit\s+follows\b"
    r"|\baccordingly\b"
    r"|\btherefore\b|\bfor\s+(?:these|those|the)\s+reasons\b|\bin\s+(?:short|summary|conclusion|sum)\b"
    r"|\bin\s+(?:these|the)\s+circumstances\b|\bit\s+is\s+(?:clear|plain)\b|\blooked\s+at\s+overall\b",
    _I,
)
# what it concludes: the decision below right or wrong, a point failing
_JUDGES = re.compile(
    r"\b(?:was|were|is|are)\s+(?:\w+\s+){0,2}(?:right|wrong|correct|entitled|justified|mistaken|in\s+error"
    r"|open\s+to)\b|\berr(?:ed|or|s)?\b|\bcannot\s+(?:stand|be\s+faulted|be\s+sustained)\b"
    r"|\b(?:correctly|rightly|wrongly|properly)\s+(?:\w+\s+)?(?:interpreted|construed|decided|held|found"
    r"|concluded|applied|directed|rejected|accepted|granted|denied|dismissed|entered|enforced|admitted"
    r"|excluded)\b"
    r"|\babuse[ds]?\s+(?:of\s+)?(?:its|his|her|their)?\s*discretion\b|\barbitrary\s+and\s+capricious\b"
    r"|\bclearly\s+erroneous\b|\b(?:did|does|has|have)\s+not\s+(?:raise|establish|demonstrate|show|prove)\b"
    r"|\bno\s+(?:basis|error|reason|breach|delay|merit)\b|\bmisconceived\b|\bfails?\b|\bsucceeds?\b",
    _I,
)
# a reason given with the outcome: "… must be allowed on grounds of procedural irregularity"
_BECAUSE = re.compile(r"\bbecause\b|\bsince\b|\bon\s+(?:the\s+)?grounds?\s+(?:of|that)\b", _I)
# a sentence leaving a point undecided gives no reason ("It is therefore unnecessary to consider …")
_UNDECIDED = re.compile(
    r"\bunnecessary\s+to\b|\bnot\s+(?:strictly\s+)?necessary\s+to\b|\bneed\s+not\b"
    r"|\bdo(?:es)?\s+not\s+need\s+to\b"
    r"|\b(?:cannot|will\s+not|do\s+not|decline\s+to)\s+(?:consider|address|reach)\b",
    _I,
)
# the court disposing of the judgment below in its own words: "We affirm.", "we therefore reverse the grant
# of summary judgment", "The judgment is affirmed.", "AFFIRMED.", "Order affirmed, with costs"
_COURT_DISPOSES = re.compile(
    r"\bwe\s+(?:(?:therefore|accordingly|thus|now|hereby|also|must|will|so|respectfully)\s+){0,2}"
    r"(?:modify\s+and\s+)?(?:affirm|reverse|vacate|remand)\b|\band\s+so\s+do\s+we\b"
    r"|\b(?:is|are|be)\s+(?:hereby\s+|therefore\s+|accordingly\s+|also\s+)?(?:affirmed|reversed|vacated)\b"
    r"|^\W*(?:¶\s*\d+\s+)?(?:(?:judgment|order|decision)\s+|modified\s+and\s+)?"
    r"(?:affirmed|reversed|vacated)\b",
    _I,
)
# a rule of review or a condition, not this court's outcome ("We will reverse … only if …", "we affirm if …")
_CONDITIONAL = re.compile(r"\bif\b|\bunless\b|\bonly\b|\bwhen\b", _I)
# a judge's own vote in a separate opinion ("I would reverse"), not the court's disposition
_OWN_VOTE = re.compile(r"\bI\s")
# a reason stated before the outcome in the same sentence: "Because it was reasonable to believe …, we
# affirm.", "Concluding that …, we affirm.", "… did not unreasonably apply federal law, so we affirm"
_REASON_FIRST = re.compile(
    r"^\W*(?:because|since|given\s+that|concluding|finding|having\s+(?:concluded|found|determined|held))\b"
    r"|^\W*as\s+(?!(?:noted|stated|discussed|explained|set\s+out|a\s+result|we)\b)\w+"
    r"|,\s*(?:and\s+)?so\s*,?\s*$",
    _I,
)
# a party's case reported, not the court's reasons ("Claimant also argues that the commission erred …",
# "Tarrant's argument is premised on …")
_CONTENDS = re.compile(
    r"^\W*(?:[\w,’']+\s+){0,4}?(?:also\s+|further\s+)?(?:argues|argued|contends|contended|asserts|asserted"
    r"|maintains|submits|submitted|claims|complains)\b"
    r"|^\W*(?:[\w,’']+\s+){0,3}?(?:argument|contention|submission)s?\s+(?:is|was|rests|relies)\b",
    _I,
)
_BEFORE = 4  # passages before the disposition's that may hold its reasons


def asks_why(question: str) -> bool:
    return bool(_ASKED.search(question))


def reasons(passages: list[Passage]) -> list[tuple[str, str]]:
    """(segment_id, sentence) of the court's reasons for its disposition of the appeal, strongest first; []
    when no disposition is found."""
    body = [p for p in passages if p.block_type not in COVER_BLOCKS]
    cut = sentences_of(body)
    lead = lead_disposition(body)
    disposals = [(cut.index(lead), DISPOSES)] if lead else _court_disposals(cut)
    best: dict[int, tuple[int, int]] = {}  # sentence -> (score, distance to its disposition)
    for at, disposes in disposals:
        # before it, and after it in its own passage ("I would allow both appeals. … I have concluded …")
        near = [n for n, f in enumerate(cut) if cut[at][0] - _BEFORE <= f[0] <= cut[at][0] and n != at]
        scored = [(_score(cut[n][2]), n) for n in near] + [(_disposition_score(cut[at][2], disposes), at)]
        for score, n in scored:
            if score > 0 and (n not in best or (-score, abs(at - n)) < (-best[n][0], best[n][1])):
                best[n] = (score, abs(at - n))
    return [cut[n][1:] for n in sorted(best, key=lambda n: (-best[n][0], best[n][1]))]


def _court_disposals(cut: list[tuple[int, str, str]]) -> list[tuple[int, re.Pattern]]:
    """(index into `cut`, its pattern) of each sentence by which an American court disposes of the judgment
    below ("We affirm.", "The judgment is reversed.", "we dismiss the appeal"), where it opens and where it
    concludes; no rule of review and no judge's own vote."""
    out = []
    for n, (_, _, sentence) in enumerate(cut):
        pattern = next((p for p in (_COURT_DISPOSES, DISPOSES) if p.search(sentence)), None)
        if pattern is not None and not _CONDITIONAL.search(sentence) and not _OWN_VOTE.search(sentence):
            out.append((n, pattern))
    return out


def _score(sentence: str) -> int:
    """How surely a sentence gives a reason: what it concludes of the decision below, a reason it opens with
    ("Because …", "Concluding that …"), then a conclusion in the judge's own voice; a quotation, a party's
    argument, or a point left undecided, gives none."""
    if (
        sentence.lstrip("0123456789. ").startswith(("“", '"'))
        or _UNDECIDED.search(sentence)
        or _CONTENDS.search(sentence)
        or len(sentence) < 40
    ):
        return 0
    # "Because …" opens a reason even where a page break parted it from its outcome
    return (
        2 * bool(_JUDGES.search(sentence))
        + bool(_CONCLUDES.search(sentence))
        + 2 * bool(_REASON_FIRST.match(sentence))
    )


def _disposition_score(sentence: str, disposes: re.Pattern) -> int:
    """The disposition gives a reason before its outcome ("The UT were therefore correct … and I would
    dismiss the appeal", "Because …, we affirm.") or with a "because" after it; its consequential orders
    ("… and hold that S&H is entitled to summary judgment") are none."""
    outcome = disposes.search(sentence)
    before = sentence[: outcome.start()]
    if _REASON_FIRST.search(before):
        return 3
    # what it concludes of the decision below, not a bare "Accordingly, the order … should be reversed"
    judged = _score(before)
    return judged if judged >= 2 else 3 * bool(_BECAUSE.search(sentence[outcome.end() :]))
