"""English questions about a court's separate opinions: who dissented or wrote a concurring opinion ("Who
dissented?", "Which judge wrote a concurring opinion?") and whether any judge dissented ("Was there a
dissent?", "Was the decision unanimous?"), read from where an American opinion marks them: a separate
opinion's heading ("GRAFFEO, J. (dissenting).", "BARRON, Circuit Judge, concurring in part …"), the court's
record of its vote ("Judge Graffeo dissents and votes to affirm in another opinion", "WEAVER, J., dissents and
states as follows:") and a judge joining one ("Justice SHIRLEY S. ABRAHAMSON joins this dissent").

A parenthetical after a cited case ("(Scalia, J., concurring in judgment)") opens no sentence and a dissent
in a court below is told in the past ("Then-Judge Ervin dissented"), so neither is taken for this court's.
Whether a judge dissented is answered "No" only where the opinion records the other judges joining it
("BAKER, J., and BAILEY, J., concur.", "… delivered the opinion for a unanimous Court.") and no separate
opinion dissents: an opinion that records neither says nothing either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.hybrid import Passage, sentences_of
from retrieval.text import joined

_I = re.IGNORECASE
# a judge's name as an opinion prints it: "GRAFFEO", "ANN WALSH BRADLEY", "SHIRLEY S. ABRAHAMSON", "McDONALD"
_NAME = r"(?:[A-Z][A-Za-z'’-]*\.?\s+){0,3}?(?:Mc)?[A-Z][A-Za-z'’-]+"
_NAMES = rf"{_NAME}(?:\s*(?:,\s*(?:and\s+)?|and\s+){_NAME})*"
# a name is a judge's where an office comes before it or a title after it ("The dissent argues" names no one)
_OFFICE = r"(?:Chief\s+|Senior\s+|Presiding\s+)?(?:Judges?|Justices?)\s+"
_TITLE = (
    r"(?:,?\s*(?:C\.\s?J\.|P\.\s?J\.|JJ?\.|(?:Chief\s+|Senior\s+|Circuit\s+|Presiding\s+)?(?:Judge|Justice)))"
)
# "GRAFFEO, J. (dissenting).", "Justice SCALIA, with whom Justice THOMAS joins, dissenting.", "McDONALD, J.,
# concurring and dissenting, which ADKINS, J., joins.", "McDonald, J., filed an opinion concurring and
# dissenting in which Adkins, J., joined."
_HEADING = re.compile(
    rf"^\W*(?:{_OFFICE}(?P<named>{_NAME})|(?P<name>{_NAME}){_TITLE}),?\s*\(?\s*"
    rf"(?:with\s+whom\s+(?:{_OFFICE})?(?P<with>{_NAMES}){_TITLE}?,?\s+joins?,\s*)?"
    r"(?:filed\s+(?:an?\s+|a\s+separate\s+)?(?:opinion\s+)?)?"
    r"(?P<kind>concurring|dissenting)(?P<rest>[^.]*(?:\.[^A-Z][^.]*)*)",
)
# "WEAVER, J., dissents and states as follows:", "Judge READ concurs in result in a separate opinion",
# "ADKINS and McDONALD, JJ., concur and dissent."
_VOTE = re.compile(
    rf"(?:^|;\s*|\.\s+)(?:{_OFFICE}(?P<named>{_NAMES})|(?P<name>{_NAMES}){_TITLE}),?\s+"
    r"(?P<kind>dissents\b|concur\s+and\s+dissent\b"
    r"|concurs?\s+(?:in\s+(?:the\s+)?result|separately|in\s+a\s+separate))",
)
# "… joins this dissent", "… which ADKINS, J., joins", "… in which Adkins, J., joined"
_JOINS = re.compile(
    rf"(?:{_OFFICE})(?P<name>{_NAME})\s+joins?\s+(?:in\s+)?this\s+(?:dissent|concurrence)"
    rf"|\b(?:in\s+)?which\s+(?P<name2>{_NAMES}){_TITLE}?,?\s+join(?:s|ed)\b",
)
# the other judges joining the court's opinion ("… delivered the opinion for a unanimous Court.")
_JOINED = re.compile(
    r"(?:JJ?\.|C\.\s?J\.|P\.\s?J\.),?\s+concur\.?$|\b(?:Judges?|Justices?)\s+[A-Z][^.;]*\bconcur\.?$"
    r"|\bthe\s+other\s+judges\s+concurred\b|^\W*We\s+concur\b|\bfor\s+a\s+unanimous\s+[Cc]ourt\b"
    r"|\bconcurred\s+in\s+the\s+judgment\s+and\s+opinion\b",
)
_WHO = r"^\s*(?:who|which\s+(?:judges?|justices?))\s+"
_THERE = r"^\s*(?:was|were)\s+there\s+(?:a|any)\s+"
_CONCURRENCE = r"(?:separate\s+)?concurr(?:ence|ing\s+opinion)"
_UNANIMOUS = r"^\s*(?:was|is)\s+(?:the\s+(?:decision|judgment|opinion|court)|it)\s+unanimous"
_ASKED = {
    ("dissent", "who"): rf"{_WHO}(?:dissented|dissents|(?:wrote|filed)\s+(?:a|the)\s+dissent)",
    ("concur", "who"): rf"{_WHO}(?:wrote|filed)\s+(?:a|the)\s+{_CONCURRENCE}"
    r"|^\s*who\s+concurred\s+(?:separately|in\s+the\s+(?:judgment|result))",
    ("dissent", "whether"): rf"{_THERE}dissent|^\s*did\s+anyone\s+dissent"
    r"|^\s*did\s+(?:any|a|one)\s+(?:judges?|justices?|members?\s+of\s+the\s+(?:court|panel))\s+dissent",
    ("dissent", "unanimous"): _UNANIMOUS,
    ("concur", "whether"): rf"{_THERE}{_CONCURRENCE}",
}
_NONE = {"dissent": "No judge dissented.", "concur": "No judge wrote a separate concurrence."}


@dataclass(frozen=True)
class Separate:
    """A judge's separate opinion or vote: "dissent" (a dissent in part included) or "concur"."""

    kind: str
    judge: str
    segment_id: str
    sentence: str


def asked_separate(question: str) -> tuple[str, str] | None:
    """(kind, form) a question asks about: "dissent" or "concur"; "who", "whether" or "unanimous"."""
    return next((asked for asked, p in _ASKED.items() if re.search(p, question, _I)), None)


def separate_opinions(passages: list[Passage]) -> list[Separate]:
    """Every judge's separate opinion or vote the opinion records, in order, each judge once per kind."""
    found: dict[tuple[str, str], Separate] = {}
    for _, segment_id, sentence in sentences_of(passages):
        for kind, names in _marked(sentence):
            for name in names:
                found.setdefault((kind, name), Separate(kind, name, segment_id, sentence))
    return list(found.values())


def _marked(sentence: str) -> list[tuple[str, list[str]]]:
    """(kind, judges) a sentence marks as separate: a heading, a recorded vote, judges joining one."""
    out = []
    heading = _HEADING.match(sentence)
    if heading:
        kind = "dissent" if "dissent" in heading["kind"] + heading["rest"] else "concur"
        out.append((kind, [_judge(heading["named"] or heading["name"]), *_judges(heading["with"] or "")]))
        joins = _JOINS.search(heading["rest"])
        if joins:
            out.append((kind, _judges(joins["name"] or joins["name2"])))
        return out
    for vote in _VOTE.finditer(sentence):
        out.append(
            ("dissent" if "dissent" in vote["kind"] else "concur", _judges(vote["named"] or vote["name"]))
        )
    joins = _JOINS.search(sentence)
    if joins and joins["name"]:
        out.append(("dissent" if "dissent" in joins[0] else "concur", [_judge(joins["name"])]))
    return out


def _judges(names: str) -> list[str]:
    return [_judge(n) for n in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", names) if n.strip()]


def _judge(name: str) -> str:
    """ "ANN WALSH BRADLEY" -> "Ann Walsh Bradley", "McDONALD" -> "McDonald"; "Graffeo" stays as it is."""
    words = []
    for w in name.split():
        if w.startswith("Mc") and w[2:].isupper():
            w = "Mc" + w[2:].capitalize()
        elif w.isupper() and len(w.rstrip(".")) > 1:
            w = w.capitalize()
        words.append(w)
    return " ".join(words)


def separate_answer(question: str, passages: list[Passage]) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(answer, answer_type, [(segment_id, sentence)]) of a question about separate opinions; None when the
    question asks no such thing or the opinion says nothing either way."""
    asked = asked_separate(question)
    if asked is None:
        return None
    kind, form = asked
    found = [s for s in separate_opinions(passages) if s.kind == kind]
    units = list(dict.fromkeys((s.segment_id, s.sentence) for s in found))
    if found:
        if form == "who":
            return joined([s.judge for s in found]), "span", units
        return ("NO", "no", units) if form == "unanimous" else ("YES", "yes", units)
    joining = [(segment_id, s) for _, segment_id, s in sentences_of(passages) if _JOINED.search(s)][:1]
    if not joining:
        return None
    if form == "who":
        return _NONE[kind], "span", joining
    return ("YES", "yes", joining) if form == "unanimous" else ("NO", "no", joining)
