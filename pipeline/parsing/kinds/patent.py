"""Patents: title page, abstract, description sections named by their headings, one block per claim.

Structured sources (USPTO/EP XML) arrive typed already; this module types patents that arrive as text
(PDF, plain text) by the genre's headings and the numbered claims after "What is claimed is".
"""

from __future__ import annotations

import datetime as dt
import re

from pipeline.parsing.kinds.patent_front import front_page
from pipeline.parsing.spans import Span, split_spans
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

KIND = DocKind.PATENT
_I = re.IGNORECASE

_SECTIONS = (
    (re.compile(r"cross[- ]reference|related\s+applications?|priority", _I), T.OTHER),
    (
        re.compile(
            r"brief\s+description\s+of\s+(?:the\s+)?(?:several\s+views\s+of\s+the\s+)?(?:drawings?|figures?)"
            r"|description\s+of\s+(?:the\s+)?(?:drawings?|figures?)|^drawings?$",
            _I,
        ),
        T.DRAWINGS,
    ),
    (
        re.compile(
            r"detailed\s+description|description\s+of\s+(?:the\s+)?(?:preferred|illustrative|exemplary|specific)"
            r"|(?:preferred\s+)?embodiments?|best\s+mode|^examples?\b|^description$|modes?\s+for\s+carrying",
            _I,
        ),
        T.DESCRIPTION,
    ),
    (re.compile(r"field|technical\s+field", _I), T.FIELD),
    (
        re.compile(r"background|prior\s+art|related\s+art|description\s+of\s+(?:the\s+)?related", _I),
        T.BACKGROUND,
    ),
    (
        re.compile(
            r"summary|disclosure\s+of\s+(?:the\s+)?invention|objects?\s+(?:and\s+advantages\s+)?of|brief\s+description"
            r"\s+of\s+(?:the\s+)?invention|^(?:the\s+)?invention$",
            _I,
        ),
        T.SUMMARY,
    ),
    (re.compile(r"^abstract", _I), T.ABSTRACT),
    (re.compile(r"^claims?$|what\s+is\s+claimed|^(?:i|we)\s+claim|the\s+invention\s+claimed", _I), T.CLAIM),
)

_SCORE_CUES = re.compile(
    r"\b(?:claims?|wherein|invention|embodiments?|patent|fig\.|figs\.|assignee|inventors?|apparatus|comprising"
    r"|said|prior\s+art|abstract)\b",
    _I,
)


def section_for_heading(heading: str) -> T | None:
    """The section a description heading opens (None: not a heading we know)."""
    h = heading.strip().strip(":.").strip()
    if not h or len(h) > 120:
        return None
    return next((t for rx, t in _SECTIONS if rx.search(h)), None)


_DEP = re.compile(
    r"\bclaims?\s+(\d+)((?:\s*(?:,|or|and|to|through|-|–)\s*(?:claims?\s+)?\d+)*)",
    _I,
)
_NUM = re.compile(r"\d+|to|through|-|–", _I)


def claim_references(text: str) -> list[tuple[int, int, list[int]]]:
    """(start, end, claim numbers) of each back-reference in a claim's wording ("as claimed in claim 1",
    "any of claims 2 to 4"): offsets into `text`, the claim's own leading number skipped."""
    lead = _CLAIM_NUMBER.match(text)
    refs: list[tuple[int, int, list[int]]] = []
    for m in _DEP.finditer(text, lead.end() if lead else 0):
        tokens = [m.group(1), *_NUM.findall(m.group(2))]
        numbers: list[int] = []
        prev: int | None = None
        ranged = False
        for tok in tokens:
            if tok.isdigit():
                n = int(tok)
                if ranged and prev is not None and prev < n <= prev + 200:
                    numbers.extend(range(prev + 1, n + 1))
                else:
                    numbers.append(n)
                prev, ranged = n, False
            else:
                ranged = True
        refs.append((m.start(), m.end(), numbers))
    return refs


def claim_dependencies(text: str) -> list[int]:
    """Claims a claim refers back to, from its wording ("as claimed in claim 1", "any of claims 2 to 4")."""
    return sorted({n for _, _, numbers in claim_references(text) for n in numbers})


def claim_number(text: str) -> int | None:
    """The number a claim opens with ("3. The device of claim 1"), if it has one."""
    lead = _CLAIM_NUMBER.match(text)
    return int(lead.group(1)) if lead else None


_STRONG_CUES = re.compile(
    r"letters\s+patent|specification\s+forming\s+part|be\s+it\s+known\s+that|united\s+states\s+patent|patent\s+office"
    r"|what\s+is\s+claimed|(?:i|we)\s+claim[:\s—-]|claimed\s+is|date\s+of\s+patent|appl\.\s+no",
    _I,
)


def score(text: str, language: str) -> float:
    if language != "en":
        return 0.0
    sample = text[:12000]
    hits = len(_SCORE_CUES.findall(sample))
    tail = text[-12000:] if len(text) > 12000 else ""  # the claims come last
    strong = len({m.group(0).lower()[:8] for part in (sample, tail) for m in _STRONG_CUES.finditer(part)})
    return min(1.0, hits / 24 + strong / 3)


_INTRO = (
    r"(?:what\s+(?:is|are)\s+claimed|what\s+(?:i|we)\s+claim|(?:i|we)\s+claim\s*[:—-]|the\s+invention\s+claimed"
    r"|the\s+embodiments\s+of\s+the\s+invention\s+in\s+which)"
)
_CLAIMS_START = re.compile(rf"^(?:{_INTRO}|claims?$)", _I)
# Layout often runs the claims' introduction on from the last paragraph of the description.
_INTRO_CUT = re.compile(rf"(?<=[.;!?])\s+(?={_INTRO})", _I)
# A claim starts a paragraph with its number; a paragraph can hold several when the layout ran them on.
_CLAIM_NUMBER = re.compile(r"^\s*(\d{1,3})\s*[.)]\s*")
_CLAIM_CUTS = re.compile(r"(?<=[.;:])\s+(?=\d{1,3}\s*\.\s+(?:A|An|The|In|Apparatus|Method|Process|Device)\b)")
_HEADING_LINE = re.compile(r"^[A-Z][A-Z0-9 ,.'()\-]{3,80}$")


def type_spans(text: str, spans: list[Span]) -> list[Span]:
    if all(s.type is not None for s in spans):
        return spans
    for s in spans:
        if s.type is T.APPENDIX:
            s.type = None  # patents have no footnotes: what looked like one is typed like the rest
    state = T.HEADER
    out: list[Span] = []
    spans = split_spans(text, spans, _INTRO_CUT)
    claims_at = next(
        (i for i, s in enumerate(spans) if _CLAIMS_START.match(text[s.start : s.end].strip())), None
    )
    if claims_at is not None:
        spans = spans[: claims_at + 1] + split_spans(text, spans[claims_at + 1 :], _CLAIM_CUTS)
    if claims_at is not None:
        spans = spans[: claims_at + 1] + _one_per_claim(text, spans[claims_at + 1 :])
    for i, s in enumerate(spans):
        piece = text[s.start : s.end]
        if s.type is not None:
            state = s.type if s.type is not T.APPENDIX else state  # a footnote does not open a section
        elif claims_at is not None and i >= claims_at:
            s.type = T.CLAIM
        else:
            head = (
                section_for_heading(piece)
                if len(piece) <= 120 and (_HEADING_LINE.match(piece) or len(piece) < 60)
                else None
            )
            if head is not None and head is not T.CLAIM:
                state = head
            elif state is T.HEADER and re.match(
                r"^\(?\d{2}\)?\s*\w|^(?:inventors?|assignee|appl|filed|int\.|u\.s\.)", piece, _I
            ):
                state = T.HEADER
            elif state is T.HEADER and i > 0 and len(piece) > 300:
                state = T.DESCRIPTION  # old patents open straight into prose
            s.type = (
                T.PARTIES
                if state is T.HEADER and re.match(r"^\(?7[1-3]\)?|^(?:inventors?|assignee)\b", piece, _I)
                else state
            )
        out.append(s)
    return out


def _one_per_claim(text: str, spans: list[Span]) -> list[Span]:
    """Merge the paragraphs layout cut a claim into: a claim runs until the next claim number, over page
    breaks too (the block keeps one box per page)."""
    out: list[Span] = []
    for s in spans:
        if out and not _CLAIM_NUMBER.match(text[s.start : s.end]):
            out[-1] = out[-1].joined(s)
        else:
            out.append(s)
    return out


# ---- metadata ------------------------------------------------------------------------------------

_CLASS = re.compile(r"Int\.\s*Cl\.?\s*[\d,]*\s*:?\s*([A-H]\d{2}[A-Z]\s*\d+/\d+)", _I)


def parse_yyyymmdd(s: str | None) -> dt.date | None:
    """USPTO/EPO dates (YYYYMMDD; a day or month of 00 means unknown, read as 1)."""
    if not s:
        return None
    s = s.strip()
    if not re.fullmatch(r"\d{8}", s):
        return None
    try:
        return dt.date(int(s[:4]), max(1, int(s[4:6])), max(1, int(s[6:8])))
    except ValueError:
        return None


def extract_meta(text: str, spans: list[Span]) -> tuple[DocMeta, str | None]:
    head = text[: spans[min(len(spans) - 1, 40)].end] if spans else ""
    value = {name: f.value for name, f in front_page(text).items()}
    meta = DocMeta(
        doc_type="patent",
        patent_number=value.get("number"),
        date=value.get("granted"),
        filing_date=value.get("filed"),
    )
    meta.parties = [Party(name=n, role="inventor") for n in value.get("inventors", []) if n]
    if value.get("assignee"):
        meta.parties.append(Party(name=value["assignee"], role="assignee"))
    meta.classes = list(dict.fromkeys(re.sub(r"\s+", " ", c) for c in _CLASS.findall(head)))
    return meta, value.get("title")
