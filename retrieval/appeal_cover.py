"""What an England and Wales appeal's cover says beyond the parser's fields, for retrieval.caption_questions:
the court and the judge appealed from ("ON APPEAL FROM THE HIGH COURT OF JUSTICE / QUEEN'S BENCH DIVISION /
Mr Justice Jacobs / [2019] EWHC 3107 (Comm)") and counsel for each side with the solicitors instructing them
("Mr X QC and Ms Y (instructed by Z LLP) for the Appellant").

The cover's lines reach the run as blocks, sometimes one per printed line, sometimes several lines run
together ("IN THE COURT OF APPEAL (CIVIL DIVISION) ON APPEAL FROM THE EMPLOYMENT APPEAL TRIBUNAL SOOLE J"),
so both are read from the blocks' text in order, not line by line: the court below is what follows "ON
APPEAL FROM" up to its first judge's name, less the lower court's references (its neutral citation, claim
numbers); the judge below runs from that name to the court's address or date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.parsing.legaldocml import INSTRUCTED, ROLES
from retrieval.covers import COVER_BLOCKS, Cover

_I = re.IGNORECASE
_FROM = re.compile(r"\bon\s+appeal\s+from\s*:?\s*(?:from\s+)?", _I)
# where the court below's lines end: the Court of Appeal's own address, date and bench, or a second appeal
_END = re.compile(
    r"\b(?:royal\s+courts\s+of\s+justice|date\s*:|before\s*:|hearing\s+dates?|neutral\s+citation|between\b"
    r"|and\s+(?:on\s+appeal\s+)?from\b|in\s+the\s+matter\s+of\b|cardiff\s+civil\s+justice)",
    _I,
)
# the lower court's references: its neutral citation, claim and case numbers, a template's placeholder
_REFERENCE = re.compile(
    r"\[\d{4}\]\s*[A-Za-z]+(?:\s+[A-Za-z]+)?\s*\d+(?:\s*\([A-Za-z ]+\))?"
    r"|\b(?:lower\s+court\s+ncn|claim|case|appeal)\s*(?:nos?\.?|numbers?)?\s*:?\s*(?=[\w/-]*\d)[\w/-]+"
    r"|(?<![\w(])(?=[\w/-]*\d)[A-Za-z]{0,8}[/-]?\d[\w/-]*(?:\s*(?:and|&|,)\s*(?=[\w/-]*\d)[\w/-]+)*"
    r"|insert\s+lower\s+court\s+nc\s+number\s+here",
    _I,
)
_COURT_WORD = (
    r"(?!(?:THE|OF|AND|IN|AT|COURTS?|DIVISION|TRIBUNAL|CHAMBER|LIST|JUSTICE|HIGH|FAMILY|COUNTY|BENCH|QUEEN"
    r"|QUEEN’S|QUEEN'S|BUSINESS|PROPERTY|ENGLAND|WALES|APPEAL|ADMINISTRATIVE|COMMERCIAL|CHANCERY|PLANNING"
    r"|UPPER|LANDS|TAX|IMMIGRATION|ASYLUM|EMPLOYMENT|COMPETITION|PATENTS|INTELLECTUAL|DISTRICT|REGISTRY"
    r"|SITTING|DIVISIONAL|PROTECTION|CENTRAL|LONDON|QBD|CHD)\b)"
)
_WORD = rf"\b(?i:{_COURT_WORD})(?-i:[A-ZÀ-Ý][\w'’.-]*)"
_NAME = rf"{_WORD}(?:\s+(?:{_WORD}|de|van|von|der|du|le))*"
_JUDGE = re.compile(
    rf"(?:the\s+)?(?:hon(?:ourable|\.)?\s+)?(?:mr|mrs|ms|miss)\s+(?:justice|recorder)\s+{_NAME}"
    rf"|(?:his|her)\s+honour\s+(?:judge\s+)?{_NAME}|hh\s*j(?:udge)?\s+{_NAME}"
    rf"|(?:(?:deputy\s+)?(?:district|circuit|upper\s+tribunal|employment|tribunal)\s+)?judges?\s+{_NAME}"
    rf"|(?:deputy\s+)?master\s+{_NAME}|recorder\s+{_NAME}|(?:lord|lady)\s+justice\s+{_NAME}"
    rf"|(?:the\s+)?(?:hon\s+)?(?:lord|lady|sir|dame)\s+{_NAME}|president\s+{_NAME}|the\s+president\b"
    rf"|(?:(?:mr|mrs|ms|miss|dr|prof(?:essor)?)\.?\s+)?(?:{_WORD}\s+){{0,3}}{_WORD}\s+(?-i:L?JJ?|QC|KC)\b",
    _I,
)
_SITTING = re.compile(r"\(?\s*\bsitting\s+as\b[^()]*(?:\([^()]*\)[^()]*)*\)?|\(\s*\d\s*\)", _I)
_COUNSEL_START = re.compile(r"\(instructed\b|\bappeared\s+on\s+behalf\s+of\b", _I)
_COUNSEL_END = re.compile(r"^\s*(?:hearing\s+dates?|approved\s+judgment|judgment\s+approved|covid)", _I)
# a line that says all it has to ("The Appellant Mother appeared with her McKenzie Friend", "in person")
_ALONE = re.compile(r"\bappeared\b|\bin\s+person\b|\bnot\s+represented\b", _I)
_ENTRY = re.compile(
    r"(?P<names>[^()]*?)\s*(?:\((?P<note>(?:[^()]|\([^()]*\))*)\)\s*)?,?\s*(?:appeared\s+)?"
    rf"(?:for|on\s+behalf\s+of)\s+the\s+(?P<role>(?:[\w’'-]+\s+){{0,3}}?(?:{ROLES}))\b",
    _I,
)


@dataclass(frozen=True)
class Counsel:
    names: str  # as printed: "Mr David Joseph QC, Mr Adam Kramer and Mr Ian Higgins"
    solicitors: str | None  # who instructed them ("Latham & Watkins LLP"), if the cover says
    role: str  # the side, as printed after "for the": "Appellant", "First Respondent", "MAN Appellants"


def court_below(cover: Cover) -> tuple[str | None, str | None, int] | None:
    """(the court appealed from, its judge or judges, the block saying "ON APPEAL FROM"), either None where
    the cover names none, or None for a cover without "ON APPEAL FROM"."""
    text, at = _from_text(cover)
    if at is None:
        return None
    judge = _JUDGE.search(text)
    court = _tidy(_REFERENCE.sub(" ", text[: judge.start()] if judge else text))
    if not judge:
        return court or None, None, at
    named = _tidy(_REFERENCE.sub(" ", _SITTING.sub(" ", text[judge.start() :])))
    return court or None, named or None, at


def _from_text(cover: Cover) -> tuple[str, int | None]:
    """The cover's text after "ON APPEAL FROM" up to its end (_END), over the blocks it runs on, and the
    block it starts in."""
    for i, (idx, _, text) in enumerate(cover.blocks):
        if m := _FROM.search(text):
            pieces = [text[m.end() :]]
            pieces += [t for _, kind, t in cover.blocks[i + 1 : i + 10] if kind == "HEADER"]
            joined = " ".join(pieces)
            end = _END.search(joined)
            return joined[: end.start()] if end else joined, idx
    return "", None


def _tidy(text: str) -> str:
    """Spacing, empty brackets, the separators at either end and a bracket left open or unopened."""
    text = re.sub(r"\s+", " ", re.sub(r"\(\s*\)", " ", text))
    text = re.sub(r"^[\s,:;&-]+|[\s,:;&-]+$", "", text).removesuffix(" and").strip(" ,")
    while text.endswith(")") and text.count(")") > text.count("(") or text.endswith("("):
        text = text[:-1].rstrip(" ,")
    while text.startswith("(") and text.count("(") > text.count(")") or text.startswith(")"):
        text = text[1:].lstrip(" ,")
    return text


def counsel(cover: Cover) -> list[tuple[Counsel, int]]:
    """Every counsel entry of the cover and the block it starts in, in the cover's order."""
    units: list[tuple[str, int]] = []
    started, before = False, None
    for idx, kind, text in cover.blocks:
        if kind not in COVER_BLOCKS or (started and _COUNSEL_END.match(text)):
            if started:
                break
            continue
        if not started and _COUNSEL_START.search(text):
            started = True
            if before and INSTRUCTED.match(text):  # the names stand on the line above
                units.append(before)
        before = (text, idx)
        if not started:
            continue
        last = units[-1][0] if units else ""
        runs_on = last.count("(") > last.count(")") or not (_ENTRY.search(last) or _ALONE.search(last))
        if units and runs_on:
            units[-1] = (f"{last} {text}", units[-1][1])  # the entry runs on from the block before
        else:
            units.append((text, idx))
    found = []
    for text, idx in units:
        matches = list(_ENTRY.finditer(text))
        for i, m in enumerate(matches):
            names = re.sub(r"^(?:and|&|,|;|-|–)\s+", "", m.group("names").strip(" ,;-–"), flags=_I)
            note = m.group("note") or ""
            by = re.match(r"instructed\s+(?:by|through)\s+(.+)$", note.strip(), _I | re.S)
            # the unit's last side runs to its end ("the Respondents in the appeals in the Ryder action")
            role = m.group("role") + (text[m.end() :].rstrip(" .") if i == len(matches) - 1 else "")
            if names and not _COUNSEL_START.search(names):
                found.append((Counsel(names, by.group(1).strip() if by else None, role), idx))
    return found


def for_side(entries: list[tuple[Counsel, int]], role: str) -> list[tuple[Counsel, int]]:
    """The entries for `role` (appellant, respondents…), whatever words stand before it ("First
    Respondent")."""
    stem = role.lower().rstrip("s")
    return [(c, idx) for c, idx in entries if re.search(rf"\b{stem}s?\b", c.role, _I)]
