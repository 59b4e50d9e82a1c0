"""The few words a lawyer marks inside a contract's sentence where the answer is a name or a date, not
the clause: the agreement's title, a party, a date.

    answer_span(kind, sentence) -> (start, end) in the sentence, or None when `kind` finds nothing there

`kind` is one of EXTRACTORS ("date", "title", "party") or "sentence" (the whole sentence). Which kind
answers which clause category is chosen on training contracts (retrieval.predict.train_clauses), not
here: these patterns only say what a title, a party or a date looks like in an English contract.
"""

from __future__ import annotations

import re

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?)"
)
_DATE = re.compile(
    rf"{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"  # May 8, 2014
    rf"|\d{{1,2}}\s*(?:st|nd|rd|th|t\s?h)?\s+(?:day\s+of\s+)?{_MONTH},?\s+\d{{4}}"  # 8th day of May, 2014
    r"|\d{1,2}/\d{1,2}/\d{2,4}"  # 05/08/2014
    rf"|{_MONTH},?\s+\d{{4}}"  # May 2014
    r"|\[[^\]]{0,6}\],?\s+\d{4}",  # [•], 2020: a date left blank in the filed copy
    re.IGNORECASE,
)
# words in capitals, or capitalised words, that end in the kind of instrument the contract is (one
# style or the other: a title in capitals runs on into the sentence that repeats it in title case)
_INSTRUMENT = "AGREEMENT|CONTRACT|LICENSE|LEASE|AMENDMENT"
_TITLES = (
    re.compile(rf"(?:\b[A-Z][A-Z0-9&'\-]*,?\s+){{0,8}}(?:{_INSTRUMENT})\b"),
    re.compile(rf"(?:\b[A-Z][\w&'\-]*,?\s+){{0,8}}(?:{_INSTRUMENT.title()})\b"),
)
# a party: the name after "between" / "among" up to its description or defined name; else a name in
# capitals opening the sentence (a preamble that lists the parties)
_END = r"(?=,?\s+(?:a|an)\s|\s*\(|,?\s+and\s|,\s+with\s)"
_PARTY = re.compile(rf"\b(?:between|among|BETWEEN|AMONG):?\s+(?P<name>[^\s,(\"“][^()\"“]{{1,80}}?){_END}")
_OPENING_PARTY = re.compile(rf"^(?P<name>[A-Z0-9][A-Z0-9&.,'\- ]{{1,80}}?){_END}")
_NEXT_PARTY = re.compile(rf"(?:[,)]\s*|\s)and\s+(?P<name>[A-Z0-9][^()\"“]{{1,80}}?){_END}")
_BY_PARTY = re.compile(rf"\b(?:entered into|made|executed) by:?\s+(?P<name>[A-Z0-9][^()\"“]{{1,80}}?){_END}")
# capitalised words after a comma or a bracket, up to the description a party's name is followed by
_LISTED_PARTY = re.compile(
    r"[,)]\s+(?:and\s+)?(?P<name>(?:[A-Z][\w.&'-]*,?\s+){0,6}[A-Z][\w.&'-]*)(?=,\s+(?:a|an)\s)"
)
_MOST_PARTIES = 6
_LEADING = re.compile(r"^(?:this|the)\s+", re.IGNORECASE)


def _title(sentence: str) -> tuple[int, int] | None:
    m = _TITLES[0].search(sentence) or _TITLES[1].search(sentence)
    if m is None:
        return None
    lead = _LEADING.match(m.group())
    return m.start() + (lead.end() if lead else 0), m.end()


def _party(sentence: str) -> tuple[int, int] | None:
    m = _PARTY.search(sentence) or _OPENING_PARTY.match(sentence)
    return m.span("name") if m else None


def every_party(sentence: str) -> list[tuple[int, int]]:
    """Each party the sentence names, in order: the first as `answer_span` finds a party (or after "entered
    into by"), then every name after an "and" that ends as a party's name does ("…, a Delaware corporation,
    and Allied Esports International, Inc., a Nevada corporation"), or after a comma or a bracket that a
    description follows ("(“Buyer”), Gulf Houghton Lubricants Ltd., a company incorporated …")."""
    m = _PARTY.search(sentence) or _BY_PARTY.search(sentence) or _OPENING_PARTY.match(sentence)
    if m is None:
        return []
    found = [m.span("name")]
    later = [
        n.span("name") for p in (_NEXT_PARTY, _LISTED_PARTY) for n in p.finditer(sentence, m.end("name"))
    ]
    for a, b in sorted(later):
        if a >= found[-1][1]:
            found.append((a, b))
    return found[:_MOST_PARTIES]


def _date(sentence: str) -> tuple[int, int] | None:
    m = _DATE.search(sentence)
    return m.span() if m else None


EXTRACTORS = {"date": _date, "title": _title, "party": _party}
KINDS = ("sentence", *EXTRACTORS)


def answer_span(kind: str, sentence: str) -> tuple[int, int] | None:
    if kind == "sentence":
        return 0, len(sentence)
    return EXTRACTORS[kind](sentence)
