"""American opinions as case-law publishers deliver them (Fastcase's `<Case>` XML).

The record states the case's facts in fields of its own — `ShortName`, `CourtName`, `DocketNumber`,
`DecisionDate`, `Citations`, `PartyHeader` — and carries the printed page as escaped HTML: the
header as published (citations, caption, court, dates) in `HeaderHtml`, the opinion in `CaseHtml`. The page
becomes the document's text, one line per printed paragraph or line break, typed by the English-judgment
rules like any opinion; the fields are stated outright and win over what those rules read.
"""

from __future__ import annotations

import datetime as dt
import re
from html import unescape as html_text

from lxml import etree, html

from pipeline.parsing.kinds.en_caption import docket_number, read_caption
from pipeline.parsing.spans import Extracted, TextBuilder
from pipeline.records import DocKind, DocMeta
from pipeline.sentences import period_continues

_BREAKS = re.compile(r"<\s*(?:br\b[^>]*|/?(?:p|div|center|h[1-6]|blockquote|li|tr)\b[^>]*)>", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WS = re.compile(r"[ \t\u00a0]+")
# A printed reporter's page break, "[100 A.3d 1009]", "[153 Conn.App. 268]": page 1009 starts here
_REPORTER_PAGE = re.compile(r"\[\d+ [A-Z][\w.' ]*? \d+\]")
_CLOSING = "\"'”’)]"
_JUDGE_ENDS = re.compile(r"\b(?:C\. ?)?JJ?\.$")  # "Opinion of the Court by FOLEY, J." heads what follows


def is_case(root) -> bool:
    return root.find("CaseHtml") is not None or root.find("HeaderHtml") is not None


def read_case(root) -> Extracted:
    b = TextBuilder("\n")
    for field in ("HeaderHtml", "CaseHtml"):
        for line in _pages_run_on(_printed_lines(_markup(root, field))):
            b.add(line)
    meta = DocMeta(doc_type="judgment")
    meta.court = _field(root, "Jurisdiction/CourtName")
    meta.case_number = _docket(_field(root, "DocketNumbers/DocketNumber"))
    meta.date = _decision_date(_field(root, "DecisionDate"))
    cites = [
        " ".join(filter(None, (c.findtext("Volume"), c.findtext("Reporter"), c.findtext("Page"))))
        for c in root.iterfind("Citations/Citation")
    ]
    meta.citation = cites[0] if cites else None
    caption = read_caption(_printed_lines(_markup(root, "PartyHeader")), [])
    meta.parties = caption.parties  # the panel and author are read from the page (Before …, LAVINE, J.)
    title = _field(root, "ShortName")
    return Extracted(
        text=b.text(),
        spans=b.spans,
        title=re.sub(r"\s+", " ", title) if title else caption.title,
        meta=meta,
        kind=DocKind.EN_JUDGMENT,
        language="en",
    )


def _markup(root, name: str) -> str:
    """A field's HTML, whole: publishers leave some tags unescaped (a footnote's <A>) inside the escaped
    ones."""
    el = root.find(name)
    return "".join(el.itertext()) if el is not None else ""


def _field(root, path: str) -> str | None:
    value = html_text(
        root.findtext(path) or ""
    )  # the fields are escaped HTML text ("Fin. Oversight &amp; …")
    return _WS.sub(" ", value).strip(" .") or None


def _printed_lines(fragment: str) -> list[str]:
    """The lines of an HTML fragment as printed: a line per block element or line break; footnote
    markers (superscripts) left out."""
    # control characters are no text (and lxml refuses them); a block's edges and a break end a line
    fragment = _BREAKS.sub("\n", _CONTROL.sub(" ", fragment))
    if not fragment.strip():
        return []
    try:
        root = html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return []  # nothing readable: the record is refused as one without text
    for sup in root.iter("sup"):
        sup.drop_tree()
    lines = (_WS.sub(" ", line).strip() for line in root.text_content().split("\n"))
    return [line for line in lines if line]


def _pages_run_on(lines: list[str]) -> list[str]:
    """The lines with a paragraph that a reporter's page break cuts made whole again, the break kept where
    it was printed ("… the court found that [100 A.3d 1010] the defendant …"), as the publisher itself
    prints some; a break between paragraphs stays a line of its own."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and _REPORTER_PAGE.fullmatch(lines[j]):
            j += 1  # parallel reporters print their breaks side by side
        if j > i and out and j < len(lines) and _runs_on(out[-1], lines[j]):
            out[-1] = " ".join([out[-1], *lines[i:j], lines[j]])
            i = j + 1
        else:
            out.extend(lines[i : max(j, i + 1)])
            i = max(j, i + 1)
    return out


def _runs_on(before: str, after: str) -> bool:
    """Whether the paragraph `before` goes on in `after`: `after` starts in lower case, or `before` stops
    short of a sentence's end and is no heading ("II. DISCUSSION", "A. Standard of Review")."""
    if after[:1].islower():
        return True
    tail = before.rstrip(_CLOSING)
    if tail[-1:] in ("?", "!", ":", ";"):
        return False
    if tail[-1:] == ".":
        if _JUDGE_ENDS.search(tail):
            return False
        joined = f"{tail} {after}"
        return period_continues(joined, len(tail) - 1, len(tail))
    return len(before) >= 40 and any(c.islower() for c in before)


def _docket(value: str | None) -> str | None:
    if not value:
        return None
    found = docket_number([value])
    return found or value


def _decision_date(value: str | None) -> dt.date | None:
    """ "5-22-2008" (month first) or "2013-05-14"."""
    parts = [int(x) for x in re.findall(r"\d+", value or "")[:3]]
    if len(parts) < 3:
        return None
    year, month, day = parts if parts[0] > 31 else (parts[2], parts[0], parts[1])
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None
