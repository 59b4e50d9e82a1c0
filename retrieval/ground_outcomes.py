"""Questions whether a ground of appeal succeeded ("Did ground 2 succeed?", "Was the appeal allowed on ground
3?", "Was ground 7 upheld?"), answered from where the Court of Appeal concludes on that ground.

The Court concludes ground by ground in forms of its own: "For those reasons, Ground 2 fails.", "I would
reject ground 1.", "We reject Grounds 2 and 4.", "I would therefore allow the appeal on Ground 4.", "ground 1
of the grounds of appeal succeeds", "we dismiss the appeal on Ground 4; but we allow the appeal on Grounds 1
and 3".
The same words also state a ground ("Ground 4 asserts that the judge failed …"), report a court below's
conclusion ("The Divisional Court held … that Judicial Review Ground 1 must fail") or counsel's ("Mr Facenna
QC contended … Appeal Ground 1 must fail"), or suppose an outcome ("if Ground 9 succeeded"); none of those is
the Court's. Each ground a sentence names takes the outcome nearest to it. `ground_outcome(question,
passages)` answers YES or NO with the sentences that say so, the Court's own voice ("I would …", "we …",
"therefore") first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from retrieval.hybrid import Passage, sentences_of

_WORDS = {w: str(i) for i, w in enumerate("one two three four five six seven eight nine ten".split(), 1)}
_ID = r"\d{1,2}(?:\.\d{1,2})?(?:\s?\([a-z]\))?[A-Z]?"
_ASKED_GROUND = re.compile(rf"\bground\s+(?:of appeal\s+)?({_ID}|{'|'.join(_WORDS)})(?![\w.])", re.IGNORECASE)
_ASKED_OUTCOME = re.compile(
    r"\b(?:succeed|succeeded|fail|failed|upheld|allowed|accepted|rejected|dismissed|made out|successful)\b",
    re.IGNORECASE,
)
# Ground 2 / Grounds 1, 3 and 5 / Grounds 1 – 4 / grounds 4(b) and 5 / Grounds 9.2 and 9.3
_GROUNDS = re.compile(
    rf"\bgrounds?\s+(?:of appeal\s+)?({_ID}(?:\s*(?:,|and|&|or|to|–|-)\s*{_ID})*)", re.IGNORECASE
)
_ITEM = re.compile(_ID)
_UPHELD = re.compile(
    r"\bsucceeds?\b|\bsucceeded\b|\bis made out\b|\buphold\b|\bupheld\b"
    r"|\ballow(?:ed)? (?:it|the appeals?) on\b|\bappeal (?:is|must be|should be|will be) allowed on\b"
    r"|\baccept grounds?\b|\bis established\b",
    re.IGNORECASE,
)
_FAILED = re.compile(
    r"\bfails?\b|\bfailed\b|\bmust (?:also )?fail\b|\bcannot succeed\b|\breject\b|\brejected\b"
    r"|\bdismiss(?:ed)? (?:it|the appeals?) on\b|\bis not made out\b|\bfalls? away\b"
    r"|\brefuse permission to appeal on\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:decline|refuse|not|unable)\b(?:\s+\w+){0,2}\s*$", re.IGNORECASE)
# not the Court's conclusion: a court below's, counsel's or a party's, a supposition
_BELOW = (
    r"the judge|the Divisional Court|the (?:Upper )?Tribunal|the FTT|the UT|the deputy judge|the recorder"
)
_NOT_THE_COURTS = re.compile(
    r"\b(?:held|concluded|found|decided|ruled)\b.{0,80}\bgrounds?\b"
    rf"|\b(?:{_BELOW})\b[^.]{{0,80}}\b(?:held|concluded|found|decided|rejected|accepted)\b"
    r"|\b(?:contend(?:s|ed)?|submit(?:s|ted)?|argu(?:es|ed)|agreed|asserts?|complains?|challenges|alleges?"
    r"|said|put forward)\b|\b(?:he|she) (?:began|rejected|accepted|held|found)\b"
    r"|\bconclusion (?:reached )?(?:by|of) the\b|\bif\b|\bin the event (?:that|of)\b|\bwhether\b|\bunless\b",
    re.IGNORECASE,
)
# a ground stated or described: "Ground 1: The judge erred …", "(ground 1)", "Ground 2 provided that …",
# "Ground 4 was a general complaint that …", "There were three grounds, namely: …"
_STATED = re.compile(
    rf"\bgrounds?\s+{_ID}\s*:|\(grounds?\s+{_ID}\)|\bnamely\b"
    rf"|\bgrounds?\s+{_ID}\s+(?:is that|asserts|contends|provided|provides|reads|states"
    r"|(?:is|was) (?:a|an|the)\b)",
    re.IGNORECASE,
)
_COURT_VOICE = re.compile(
    r"\b(?:I|[Ww]e)\b|\b[Tt]herefore\b|\b[Aa]ccordingly\b|\b[Ff]or (?:all )?(?:those|these|the) reasons\b"
)


def asks_ground_outcome(question: str) -> str | None:
    """The ground (its number as printed: "2", "4(a)", "9.4") a question asks whether it succeeded, else
    None."""
    ground = _ASKED_GROUND.search(question)
    if ground is None or not _ASKED_OUTCOME.search(question):
        return None
    return _normal(_WORDS.get(ground.group(1).lower(), ground.group(1)))


def ground_outcome(
    question: str, passages: Sequence[Passage]
) -> tuple[str, str, list[tuple[str, str]]] | None:
    """("YES" or "NO", answer type "yes" or "no", the sentences stating the Court's conclusion on the
    ground asked, best first), or None when the judgment states none."""
    asked = asks_ground_outcome(question)
    if asked is None:
        return None
    found = []
    for i, (_, segment_id, sentence) in enumerate(sentences_of(passages)):
        upheld = _outcome(sentence, asked)
        if upheld is not None:
            found.append((_COURT_VOICE.search(sentence) is not None, i, upheld, (segment_id, sentence)))
    if not found:
        return None
    found.sort(key=lambda f: (not f[0], -f[1]))  # the Court's own voice, then the latest
    answer = "YES" if found[0][2] else "NO"
    return answer, answer.lower(), [f[3] for f in found[:3]]


def _outcome(sentence: str, asked: str) -> bool | None:
    """Whether the sentence concludes that the ground `asked` succeeded (True) or failed (False), None when
    it concludes nothing of it: each ground takes the outcome word nearest to it."""
    if _NOT_THE_COURTS.search(sentence) or _STATED.search(sentence) or sentence.endswith(("”", '"')):
        return None  # … or the end of a judgment below quoted
    mentions = [m for m in _GROUNDS.finditer(sentence) if asked in _listed(m.group(1))]
    words = [(m.start(), m.end(), True) for m in _UPHELD.finditer(sentence)]
    words += [(m.start(), m.end(), False) for m in _FAILED.finditer(sentence)]
    if not mentions or not words:
        return None
    m = mentions[0]
    start, end, upheld = min(words, key=lambda w: min(abs(w[0] - m.end()), abs(m.start() - w[1])))
    negated = _NEGATED.search(sentence[:start]) is not None
    return upheld != negated


def _listed(items: str) -> list[str]:
    """The grounds a printed list names: "1, 3 and 5" → 1, 3, 5; "1 – 4" → 1, 2, 3, 4."""
    found = [_normal(x) for x in _ITEM.findall(items)]
    if len(found) == 2 and re.search(r"\d\s*(?:–|-|to)\s*\d", items) and all(x.isdigit() for x in found):
        return [str(n) for n in range(int(found[0]), int(found[1]) + 1)]
    return found


def _normal(ground: str) -> str:
    return re.sub(r"\s+", "", ground).lower()
