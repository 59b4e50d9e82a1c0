"""Questions about an opinion's cover ("Which court decided Mortimer v. Baca?", "What is the docket number?",
"When was the opinion filed?", "Who wrote it?", "Which judges sat?", "Who are the parties?", "Who is the
appellant?"), answered from what the parser read there (pipeline.parsing.kinds.en_caption: the court, the
docket, the date of decision, the panel and the caption's parties with their roles in `documents.meta`).

A search cannot answer these: the cover's words are few and set apart (the court on one line, "Filed" and its
date on another), counsel's names stand beside the parties', and in a corpus of opinions every cover looks
alike. The judgment asked about is the one the question names by its parties ("the Bordelon case",
"United States v. Vinton"), else the one asked about (--doc) or cited first.
"""

from __future__ import annotations

import re

from pipeline.parsing.kinds.case_names import titled
from pipeline.parsing.kinds.dates import dates
from pipeline.parsing.kinds.en_caption import author_of
from retrieval.covers import Cover, CoverAnswer
from retrieval.text import joined

_I = re.IGNORECASE
_ROLES = r"appellants?|appellees?|plaintiffs?|defendants?|petitioners?|respondents?"
# what a question asks of the cover; tried in order, the first match wins
_ASKS = tuple(
    (name, re.compile(pattern, _I))
    for name, pattern in (
        (
            "author",
            r"\bwho\s+(?:wrote|authored|delivered|penned)\b|\bauthor\s+of\s+the\s+(?:opinion|judgment)",
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
            r".{0,80}?\b(?:decided|filed|issued|entered|handed\s+down|delivered)\b"
            r"|\bwhen\s+did\s+the\s+court\s+(?:decide|rule)"
            r"|\bdate\s+of\s+(?:the\s+)?(?:decision|judgment|opinion|order)\b",
        ),
        ("role", rf"\bwho\s+(?:is|was|are|were)\s+the\s+({_ROLES})\b"),
        ("parties", r"\bwho\s+(?:are|were)\s+the\s+parties\b|\bparties\s+(?:to|in|of)\s+(?:the|this)\b"),
    )
)
_BELOW = re.compile(r"\b(?:from|below|lower|trial|first\s+instance)\b", _I)


def asked_part(question: str) -> tuple[str, str | None] | None:
    """(what the question asks of a cover, the role it asks about), or None. A question about the court
    below ("Which court was the appeal from?") is the opinion's to answer, not its cover's."""
    for name, pattern in _ASKS:
        if name == "court" and _BELOW.search(question):
            continue
        if m := pattern.search(question):
            return name, (m.group(1).lower() if name == "role" else None)
    return None


def answer_cover(cover: Cover, part: str, role: str | None) -> CoverAnswer | None:
    """The cover's answer to `part` (asked_part) in an English judgment and the block that states it, or
    None."""
    meta, text, anchor = cover.meta, None, None
    if part == "author":
        found = ((a, idx) for idx, _, t in cover.blocks if (a := author_of([t[:120]])))
        return next((CoverAnswer(a, idx, a.split()[-1]) for a, idx in found), None)
    if part == "judges" and meta.get("judges"):
        text, anchor = joined(meta["judges"]), meta["judges"][0].split()[-1]
    elif part in ("court", "number") and meta.get(_FIELD[part]):
        text = anchor = meta[_FIELD[part]]
    elif part == "date" and meta.get("date"):
        return _dated(cover, meta["date"])
    elif part in ("parties", "role"):
        text, anchor = _parties(meta.get("parties") or [], role)
    block = cover.block_of(anchor) if text else None
    return CoverAnswer(text, block, anchor) if block is not None else None


_FIELD = {"court": "court", "number": "case_number"}


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
