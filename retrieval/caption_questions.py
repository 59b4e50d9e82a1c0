"""Questions about an opinion's cover ("Which court decided Mortimer v. Baca?", "What is the docket number?",
"When was the opinion filed?", "Who wrote it?", "Which judges sat?", "Who are the parties?", "Who is the
appellant?"), answered from what the parser read there (pipeline.parsing.kinds.en_caption: the court, the
docket, the date of decision, the panel and the caption's parties with their roles in `documents.meta`).
An England and Wales appeal's cover answers more, read from its lines (retrieval.appeal_cover): its neutral
citation, the court and judge appealed from, counsel and solicitors for each side, the hearing's dates and
the date it prints after "Date:".

A search cannot answer these: the cover's words are few and set apart (the court on one line, "Filed" and its
date on another), counsel's names stand beside the parties', and in a corpus of opinions every cover looks
alike. The judgment asked about is the one the question names by its parties ("the Bordelon case",
"United States v. Vinton"), else the one asked about (--doc) or cited first.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import partial

from pipeline.parsing.kinds.case_names import titled
from pipeline.parsing.kinds.dates import dates
from pipeline.parsing.kinds.en_caption import author_of
from retrieval.appeal_cover import counsel, court_below, for_side
from retrieval.covers import Cover, CoverAnswer
from retrieval.text import joined

_I = re.IGNORECASE
_ROLES = r"appellants?|appellees?|plaintiffs?|defendants?|petitioners?|respondents?"
_SIDES = rf"{_ROLES}|claimants?|applicants?|interveners?"
# what a question asks of the cover; tried in order, the first match wins; a group holds the side asked about
_ASKS = tuple(
    (name, re.compile(pattern, _I))
    for name, pattern in (
        (
            "solicitors",
            rf"\bsolicitors?\b.*?\b({_SIDES})\b|\b({_SIDES})['’]s\s+solicitors?\b"
            rf"|\b(?:which|what)\s+(?:law\s+)?firm\b.*?\b({_SIDES})\b",
        ),
        (
            "counsel",
            rf"\bwho\s+(?:appeared|acted|argued|spoke)\s+(?:for|on\s+behalf\s+of)\s+the\s+({_SIDES})\b"
            rf"|\bwho\s+represented\s+the\s+({_SIDES})\b"
            rf"|\b(?:counsel|barristers?|advocates?)\s+(?:for|of|representing)\s+the\s+({_SIDES})\b"
            rf"|\b({_SIDES})['’]s\s+(?:counsel|barristers?|advocates?|lawyers?)\b",
        ),
        (
            "citation",
            r"\bneutral\s+citation\b|\bhow\s+(?:is|should|would|do\s+(?:i|you|we))\s+(?:\w+\s+){0,4}?cited?\b"
            r"|\bthe\s+citation\s+(?:of|for)\s+(?:the|this)\s+(?:judgment|case|decision|appeal)\b",
        ),
        (  # "Who appealed?" asks for the appellant, not whose judgment was appealed
            "appellant",
            r"^\s*who\s+(?:has\s+)?(?:appealed|is\s+appealing"
            r"|(?:brought|lodged|made)\s+(?:the|this)\s+appeal)\b",
        ),
        (
            "judge below",
            rf"^(?!.*\b(?:{_SIDES})\b)\s*(?:who\b|which\s+judge|whose\s+(?:decision|order|judgment))[^?]*"
            r"\b(?:below|first\s+instance|trial\s+judge|lower\s+court|under\s+appeal|appealed)\b",
        ),
        (  # the judge of a court named, which must be the court below (_below)
            "judge below",
            rf"^(?!.*\b(?:{_SIDES})\b)\s*(?:who\b|which\s+judge\b)[^?]*?\b(?:in|of|at)\s+the\s+"
            r"((?!(?:court|tribunal|appeal)\b)(?:[\w'’-]+\s+){1,3}?(?:court|tribunal))\b",
        ),
        (
            "court below",
            r"^\s*from\s+(?:which|what)\s+(?:court|tribunal)\b"
            r"|^\s*(?:(?:which|what)\s+(?:court|tribunal)|where)\b[^?]*"
            r"\b(?:below|from|lower|first\s+instance|appealed|come)\b"
            r"|\b(?:what|which)\s+(?:was|is)\s+the\s+(?:lower\s+court|court\s+below)\b",
        ),
        (
            "author",
            r"\bwho\s+(?:wrote|authored|delivered|penned)\b|\bauthor\s+of\s+the\s+(?:opinion|judgment)"
            r"|\bwho\s+(?:gave|gives)\s+(?:the\s+)?(?:(?:lead(?:ing)?|main|principal|first|majority)\s+)?"
            r"(?:judgment|opinion)\b",
        ),
        (
            "judges",
            r"\b(?:which|what)\s+judges\b|\bon\s+the\s+panel\b|\bwho\s+(?:sat|heard\s+the\s+(?:appeal"
            r"|case))\b",
        ),
        (
            "court",
            r"\b(?:which|what)\s+court\b(?!\s+(?:below|of\s+first|did\s+the\s+(?:case|appeal)\s+come))",
        ),
        ("number", r"\b(?:docket|case)\s+(?:number|no)\b"),
        (
            "date",
            r"\bwhen\s+(?:was|were)\s+(?:the|this|that)\s+(?:\S+\s+){0,3}?(?:opinion|judgment|decision|case"
            r"|order|appeal)\b"
            r".{0,80}?\b(decided|filed|issued|entered|handed\s+down|delivered)\b"
            r"|\bwhen\s+did\s+the\s+court\s+(?:decide|rule)"
            r"|\bdate\s+of\s+(?:the\s+)?(?:decision|judgment|opinion|order)\b",
        ),
        (
            "heard",
            r"\bwhen\s+(?:was|were)\s+(?:the|this)\s+(?:appeal|case|application|matter)s?\s+heard\b"
            r"|\bdates?\s+of\s+the\s+hearing\b|\bhearing\s+dates?\b|\bwhen\s+(?:was|did)\s+the\s+hearing\b",
        ),
        ("role", rf"\bwho\s+(?:is|was|are|were)\s+the\s+({_ROLES})\b"),
        ("parties", r"\bwho\s+(?:are|were)\s+the\s+parties\b|\bparties\s+(?:to|in|of)\s+(?:the|this)\b"),
    )
)
_BELOW = re.compile(r"\b(?:below|lower|trial|first\s+instance)\b", _I)
# a separate opinion's author is not the opinion's (retrieval.separate_opinions reads those)
_SEPARATE = re.compile(r"\b(?:dissent|concurr)", _I)


def asked_part(question: str) -> tuple[str, str | None] | None:
    """(what the question asks of a cover, the side it asks about), or None. This court's judges or
    author are not the court's below ("Who was the trial judge?"); a dissent's author is not the opinion's."""
    for name, pattern in _ASKS:
        if name in ("court", "judges", "author") and _BELOW.search(question):
            continue
        if name == "author" and _SEPARATE.search(question):
            continue
        if m := pattern.search(question):
            if name == "appellant":
                return "role", "appellant"
            return name, next((g.lower() for g in m.groups() if g), None)
    return None


def answer_cover(cover: Cover, part: str, role: str | None) -> CoverAnswer | None:
    """The cover's answer to `part` (asked_part) in an English judgment and the block that states it, or
    None."""
    meta, text, anchor = cover.meta, None, None
    if part == "author":
        found = ((a, idx) for idx, _, t in cover.blocks if (a := author_of([t[:120]])))
        return next((CoverAnswer(a, idx, a.split()[-1]) for a, idx in found), None)
    if part in _READ:
        return _READ[part](cover, role)
    if part == "judges" and meta.get("judges"):
        text, anchor = joined(meta["judges"]), meta["judges"][0].split()[-1]
    elif part in _FIELD and meta.get(_FIELD[part]):
        text = anchor = meta[_FIELD[part]]
    elif part == "date" and (meta.get("date") or meta.get("citation")):
        english = _UK.search(meta.get("citation") or "")
        if english and role == "filed":
            return None  # an England and Wales cover dates its judgment, not the appeal's filing
        printed = _handed_down(cover) if english else None
        return printed or (_dated(cover, meta["date"]) if meta.get("date") else None)
    elif part in ("parties", "role"):
        text, anchor = _parties(meta.get("parties") or [], role)
    block = cover.block_of(anchor) if text else None
    return CoverAnswer(text, block, anchor) if block is not None else None


_FIELD = {"court": "court", "number": "case_number", "citation": "citation"}


def _below(cover: Cover, named: str | None, judge: bool = False) -> CoverAnswer | None:
    """The court appealed from as the cover prints it, or with `judge` its judge (a name in capitals as a
    reader writes it); `named`, a court the question names ("in the Administrative Court"), must be that
    court: its own words ("administrative") stand in the court below's name."""
    found = court_below(cover)
    value = found[1 if judge else 0] if found else None
    if not value or (named and not _names_court(named, found[0] or "")):
        return None
    block = cover.block_of(value)
    return CoverAnswer(titled(value) if judge else value, found[2] if block is None else block, value)


def _names_court(named: str, court: str) -> bool:
    own = set(re.findall(r"[\w'’-]+", named.lower())) - _COURT_WORDS
    return bool(own) and own <= set(re.findall(r"[\w'’-]+", court.lower()))


_COURT_WORDS = frozenset("the of court tribunal appeal appeals this".split())


def _counsel(cover: Cover, role: str | None, solicitors: bool = False) -> CoverAnswer | None:
    """Counsel for the side asked about, or with `solicitors` who instructed them; each entry with its side
    where several speak for it ("for the First Respondent", "for the Second Respondent")."""
    entries = [
        (c.solicitors if solicitors else c.names, c.role, idx)
        for c, idx in for_side(counsel(cover), role or "")
    ]
    entries = [e for e in entries if e[0]]
    if not entries:
        return None
    first, _, idx = entries[0]
    shown = first if len(entries) == 1 else "; ".join(f"{v} (for the {side})" for v, side, _ in entries)
    return CoverAnswer(shown, idx, _printed_start(cover, idx, first))


def _printed_start(cover: Cover, idx: int, value: str) -> str:
    """The longest start of `value` that block `idx` prints: an entry may run on into the next block."""
    text = " ".join(next(t for i, _, t in cover.blocks if i == idx).split())
    words = value.split()
    return next((p for n in range(len(words), 0, -1) if (p := " ".join(words[:n])) in text), value)


def _heard(cover: Cover, role: str | None) -> CoverAnswer | None:
    """The hearing's date or dates as an England and Wales cover prints them ("Hearing dates: 6 and 7 October
    2020")."""
    for idx, kind, text in cover.blocks:
        m = _HEARING.search(text) if kind == "HEADER" else None
        if m and (value := m.group(1).strip(" .,")):
            return CoverAnswer(value, idx, value)
    return None


_HEARING = re.compile(r"\bhearing\s+dates?\s*:\s*([^:\n]+?)\s*(?:$|-\s-\s-|approved\s+judgment)", _I)
_READ = {
    "heard": _heard,
    "court below": _below,
    "judge below": partial(_below, judge=True),
    "counsel": _counsel,
    "solicitors": partial(_counsel, solicitors=True),
}


def _parties(parties: list[dict], role: str | None) -> tuple[str | None, str | None]:
    """The caption's parties, each side with its role ("Rock Bordelon and Torie Bordelon (petitioners);
    Commissioner of Internal Revenue (respondent)"), or those in `role`."""
    if role:
        stem = role.rstrip("s")
        names = [titled(p["name"]) for p in parties if re.search(rf"\b{stem}s?\b", p["role"] or "", _I)]
        return (joined(names), names[0]) if names else (None, None)
    sides: dict[str, list[str]] = {}
    for p in parties:
        sides.setdefault(p["role"] or "", []).append(titled(p["name"]))
    shown = "; ".join(f"{joined(names)} ({r})" if r else joined(names) for r, names in sides.items())
    return (shown or None), (titled(parties[0]["name"]) if parties else None)


def _dated(cover: Cover, iso: str) -> CoverAnswer | None:
    """The date of decision as the document prints it ("Sept. 30, 2014", "11 February 2022"), in the block
    that prints it."""
    for idx, _, text in cover.blocks:
        for _, printed, day in dates(text):
            if day.isoformat() == iso:
                shown = printed.strip(" .,")
                # in a reader's case, not "FEBRUARY 5, 2010"
                return CoverAnswer(shown.title() if shown.isupper() else shown, idx, shown)
    return None


_UK = re.compile(r"\b(?:EWCA|EWHC|EWFC|UKSC|UKUT|UKPC|UKHL|EWCOP)\b")
_DATE_LINE = re.compile(r"(?<!hearing\s)\bdate\s*:\s*", _I)  # not "Hearing date:"
_FIGURES = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b")


def _handed_down(cover: Cover) -> CoverAnswer | None:
    """The date an England and Wales cover prints after "Date:" (12/03/2020, day first, is shown in words:
    12 March 2020), which the published metadata sometimes gets wrong (the hearing's date)."""
    for idx, kind, text in cover.blocks:
        m = _DATE_LINE.search(text) if kind == "HEADER" else None
        if m is None:
            continue
        after = text[m.end() : m.end() + 40]
        if figures := _FIGURES.match(after):
            d, mo, y = (int(g) for g in figures.groups())
            try:
                day = dt.date(y if y > 99 else 2000 + y, mo, d)
            except ValueError:
                continue
            return CoverAnswer(f"{day.day} {day:%B} {day.year}", idx, figures.group(0))
        if found := dates(after):
            printed = found[0][1].strip(" .,")
            return CoverAnswer(printed, idx, printed)
    return None
