"""A patent's front page read from its text: number, grant and filing dates, title, inventors, assignee.

A modern front page codes its fields (INID codes: "(54)" title, "(75)" inventors, "(73)" assignee, "(22)"
filed, "(45)" date of patent), but a PDF's text layer seldom keeps a label beside its value: "(22) Filed:"
and "Jan. 9, 1998" are two lines, the right column's "Sep. 4, 2001 (45) Date of Patent:" comes out value
first, and the number survives only in the barcode line "US006285999B1". An old patent has no codes: its
number and dates stand in the running heads ("No. 174,465. Patented March 7, 1876"), its inventors and
assignee in the preamble ("ARTHUR L. SCHAWLOW, of Madison, N.J., … assignors to …"). Each field keeps where
its value stands in the text, so an answer can cite it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from pipeline.parsing.kinds.dates import MDY, MONTH, mdy_date

_I = re.IGNORECASE
# where one coded field ends: the next code, or the label of a field whose code OCR dropped
_NEXT = re.compile(
    r"[\[(]\s*\d\d\s*[\])]|\(\s*\*\s*\)|(?m:^\d\d(?:\)|\s|$))|\b(?:Inventors?|Inventory|Assignee|Notice|"
    r"Appl\.?\s*No|Filed|Related\s+U\.?\s?S|Int\.\s*C|U\.?\s?S\.?\s*C|Field\s+of\s+Search|References\s+Cited|"
    r"Primary\s+Examiner|Attorney|Prior\s+Publication|Patented)\b"
)
_FIELD_SPAN = 400  # characters a coded field's value may run to
_TITLE = re.compile(r"(?:[\[(]\s*54\s*[\])]|(?m:^54))\s*")
_INVENTORS = re.compile(r"\bInvent(?:ory|ors?)\s*[:;]?\s*")
_ASSIGNEE = re.compile(r"\bAssignee\s*[:;]?\s*")
_FILED = re.compile(
    r"\bFiled\b\s*[:;]?\s*(?:on\s+)?|\b[Aa]pplication\s+(?:fi|\?)led\s+(?:on\s+)?|"
    rf"\b[Aa]pplication\s+(?=(?:{MONTH})\.?\s*\d{{1,2}},\s*\d{{4}},?\s+Ser)"
)
# the grant date: labelled, in a modern drawing sheet's head ("U.S. Patent Sep. 4, 2001 Sheet 3 of 3"), or
# opening an old one's ("Aug. 11, 1942 H. K. MARKEY ET AL …", the text's first line)
_GRANTED = re.compile(
    r"Date\s+of\s+Patent\s*[:;]?\s*|[\[(]\s*45\s*[\])]\s*|(?m:^45\s)|\bPatented\s+|"
    r"\bU\.?\s?S\.?\s+Patent\s*[-—]?\s*(?=\S+\.?\s*\d{1,2},\s*\d{4}\s+Sheet)|"
    rf"\A\W{{0,3}}(?=(?:{MONTH})\.?[\s\-.]*\d)"
)
# group 1 the number as printed ("US 6,285,999 B1"), group 2 its digits
_BARCODE = re.compile(r"\b(US0*(\d{6,8})[ABE]\d?)\b")
_LABELLED_NUMBER = re.compile(
    r"(?:Patent\s+(?:Number|N[o0]\.?)\s*[:;]\s*|[\[(]11[\])]\s*|\bN[o0]\.\s*(?=\d{3}[,.]\d{3}\.?\s+Patented))"
    r"((?:US\s*)?((?:RE|D|PP)?\s?\d{1,2}[,.]?\d{3}[,.]?\d{3}|\d{3}[,.]\d{3})\b(?:\s[AB]\d\b)?)"
)
# an old patent's number heads each column of text, a line of its own
_HEAD_NUMBER = re.compile(r"(?m)^[\W\d]{0,3}\s*(\d,\d{3},\d{3})\W{0,3}$")
_OFFICE = re.compile(r"(?i:patent)\W+O[\w?]{3,5}\b|(?i:patent\s+united\s+states)")
_PREAMBLE = re.compile(r"^([A-Z][A-Za-z.'\- ]{3,60}?),\s+of\s+[A-Z]", _I | re.M)
_ASSIGNORS = re.compile(r",?\s*ass[il1]gnors?\s+(?:by\s+[^,]+,\s*)?to\s+", _I)
_SUFFIX = re.compile(
    r"\b(?:Inc|Incorporated|Corporation|Corp|Company|Co|Ltd|Limited|LLC|L\.L\.C|GmbH|AG|University)\b\.?",
    _I,
)


@dataclass(frozen=True)
class FrontField:
    """One front-page field: its value as read, where that value stands, and its typed value."""

    name: str  # number, granted, filed, title, inventors, assignee
    text: str
    start: int
    end: int
    value: object  # str, dt.date, or list[str] for inventors


def _organisation(value: str) -> str:
    """A company named with its seat ("iRobot Corporation, Burlington, MA (US)"): the name alone."""
    value = re.sub(r"\s+", " ", value)
    if m := _SUFFIX.search(value):
        return value[: m.end()].strip(" ,")
    return value.split(",")[0].strip()


def _person(chunk: str) -> str:
    """An inventor given with a residence ("Lawrence Page, Stanford, CA (US)"): the name alone."""
    return re.sub(r"\s+", " ", re.split(r",|\s+(?:of|both|all)\s", chunk, maxsplit=1)[0]).strip(" .;")


def _field(name: str, m: re.Match, group: int, value: object) -> FrontField:
    return FrontField(name, m[group], m.start(group), m.end(group), value)


def _number(text: str, head: str) -> FrontField | None:
    for pattern in (_BARCODE, _LABELLED_NUMBER):
        if m := pattern.search(head):
            return _field("number", m, 1, re.sub(r"\D", "", m[2]).lstrip("0"))
    # an old patent's column heads; a cited patent's number stands alone too, but its issue date
    # ("8/1981 Miller") follows on the next line
    heads = [
        m
        for m in _HEAD_NUMBER.finditer(text)
        if not re.match(r"\s*\d{1,2}/\d{4}", text[m.end() : m.end() + 12])
    ]
    if not heads:
        return None
    counts = Counter(m[1] for m in heads)
    m = next(m for m in heads if counts[m[1]] == max(counts.values()))
    return _field("number", m, 1, m[1].replace(",", ""))


def _dated(name: str, text: str, labels: re.Pattern) -> FrontField | None:
    """The first labelled date: one after the label before the next field's label, else one ending the
    label's line just before it ("Sep. 4, 2001 (45) Date of Patent:")."""
    for lab in labels.finditer(text):
        end = min(len(text), lab.end() + 40)
        if nxt := _NEXT.search(text, lab.end() + 1, end):
            end = nxt.start()
        line_start = text.rfind("\n", 0, lab.start()) + 1
        before = [
            m
            for m in MDY.finditer(text, line_start, lab.start())
            if re.fullmatch(r"\W*(?:[\[(]\s*\d\d\s*[\])]\W*)?", text[m.end() : lab.start()])
        ]
        for m in [MDY.search(text, lab.end(), end)] + before[-1:]:
            if m and (d := mdy_date(m)):
                return _field(name, m, 0, d)
    return None


def _coded(name: str, head: str, label: re.Pattern) -> FrontField | None:
    """A coded field's value: from its label to the next field's, lines joined, stray codes dropped."""
    if not (lab := label.search(head)):
        return None
    end = min(len(head), lab.end() + _FIELD_SPAN)
    if nxt := _NEXT.search(head, lab.end() + 1, end):
        end = nxt.start()
    value = re.sub(r"\s+", " ", head[lab.end() : end]).strip(" ,;:")
    return FrontField(name, value, lab.end(), end, value) if value else None


def _caps_line(line: str) -> bool:
    letters = [c for c in line if c.isalpha()]
    return (
        len(letters) >= 4
        and sum(c.isupper() for c in letters) >= 0.8 * len(letters)
        and not re.search(r"[,\d]", line)
    )


def _old_front(text: str) -> list[FrontField]:
    """An uncoded front page: after the office's name, the title in capitals and the preamble naming the
    inventors ("ALEXANDER GRAHAM BELL, OF SALEM, …") and any assignee ("… assignors to …")."""
    if not (office := _OFFICE.search(text, 0, 4000)):
        return []
    out, at = [], text.find("\n", office.end()) + 1
    preamble = _PREAMBLE.search(text, at, at + 600)
    lines = [m for m in re.finditer(r"[^\n]+", text[at : at + 600])][:5]
    caps = [m for m in lines if _caps_line(m[0])]
    if caps:
        first = caps[0]
        run = [first] + [m for m in lines if m.start() == first.end() + 1 and _caps_line(m[0])]
        title = " ".join(m[0].strip(" .'") for m in run)
        out.append(FrontField("title", title, at + first.start(), at + run[-1].end(), title))
        at += run[-1].end()
    region = text[at : at + 600]
    if assignors := _ASSIGNORS.search(region):
        people = region[: assignors.start()]
        tail = region[assignors.end() : assignors.end() + 200]
        name = re.split(r",\s+(?:of|a)\s|\.\s*\n", tail, maxsplit=1, flags=_I)[0]
        value = _organisation(re.sub(r"^the\s+", "", name))
        start = at + assignors.end()
        out.append(FrontField("assignee", value, start, start + len(name), value))
    elif preamble:
        people, at = preamble[1], preamble.start(1)
    else:
        return out
    names = [_person(c) for c in re.split(r",?\s+and\s+", people.strip(), flags=_I) if c.strip()]
    out.append(FrontField("inventors", people.strip(), at, at + len(people), [n for n in names if n]))
    return out


def front_page(text: str, head_chars: int = 6000) -> dict[str, FrontField]:
    """The front-page fields the text states, by name (number, granted, filed, title, inventors, assignee)."""
    head = text[:head_chars]
    inventors_at = _INVENTORS.search(head)
    found = [
        _number(text, head),
        _dated("granted", text, _GRANTED),
        _dated("filed", head, _FILED),
        _coded(
            "title", head[: inventors_at.start()] if inventors_at else head, _TITLE
        ),  # the title comes first
    ]
    if inventors := _coded("inventors", head, _INVENTORS):
        names = [_person(c) for c in inventors.text.split(";")]
        found.append(FrontField("inventors", inventors.text, inventors.start, inventors.end, names))
    if assignee := _coded("assignee", head, _ASSIGNEE):
        found.append(
            FrontField("assignee", assignee.text, assignee.start, assignee.end, _organisation(assignee.text))
        )
    fields = {f.name: f for f in found if f is not None}
    for f in _old_front(text):
        fields.setdefault(f.name, f)
    return fields
